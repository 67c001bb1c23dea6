#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A `LockedState` is a value that several threads share, reached only through ``withLock(_:)``.
///
/// It is the one lock primitive of Tidings: a type whose mutable state is shared across threads (a test
/// double, a clock, a registry a callback and a task both touch) stores `private let state =
/// LockedState(State())` and is itself plainly `Sendable`, with no lock of its own and no
/// `@unchecked`. The closure runs with the lock held: it must not suspend (it cannot: it is synchronous),
/// block, or call back into the same `LockedState` (the lock is not recursive). For state held across
/// a suspension, use an actor.
///
/// For example:
///
/// ```swift
/// final class Counter: Sendable {
///     private let count = LockedState(0)
///     func increment() -> Int { count.withLock { $0 += 1; return $0 } }
/// }
/// ```
public final class LockedState<Value> {
    // `Synchronization.Mutex` needs macOS 15 / iOS 18 and the package supports macOS 14 / iOS 17, so the
    // lock is the platform's own: `os_unfair_lock` on Apple platforms, `pthread_mutex_t` elsewhere. It
    // lives at a fixed heap address, as both require (never `inout` on a stored property).
    #if canImport(Darwin)
        @usableFromInline let lock: UnsafeMutablePointer<os_unfair_lock>
    #else
        @usableFromInline let lock: UnsafeMutablePointer<pthread_mutex_t>
    #endif
    // Inlinable, so `withLock` is specialised in the calling module: a generic call across the module
    // boundary costs about three times an uncontended lock (measured against NSLock, which is inlined).
    @usableFromInline var value: Value

    /// Creates the box holding `value`.
    public init(_ value: Value) {
        self.value = value
        lock = .allocate(capacity: 1)
        #if canImport(Darwin)
            lock.initialize(to: os_unfair_lock())
        #else
            lock.initialize(to: pthread_mutex_t())
            pthread_mutex_init(lock, nil)
        #endif
    }

    deinit {
        #if !canImport(Darwin)
            pthread_mutex_destroy(lock)
        #endif
        lock.deinitialize(count: 1)
        lock.deallocate()
    }

    /// Runs `body` with exclusive access to the value and returns what it returns.
    ///
    /// Calls from different threads are serialised: each sees every change made by the ones before it.
    /// - Throws: Whatever `body` throws; the lock is released either way.
    @inlinable
    public func withLock<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        #if canImport(Darwin)
            os_unfair_lock_lock(lock)
            defer { os_unfair_lock_unlock(lock) }
        #else
            pthread_mutex_lock(lock)
            defer { pthread_mutex_unlock(lock) }
        #endif
        return try body(&value)
    }
}

// The one `@unchecked Sendable` for lock-guarded state in Tidings: every read and write of `value` goes
// through `withLock`, which holds the lock, so no two threads ever touch it at once; and only a
// `Sendable` value may cross threads this way.
extension LockedState: @unchecked Sendable where Value: Sendable {}
