import Foundation

/// A value guarded by a lock, for state shared between the reactor queue and async callers.
///
/// The closure passed to `withLock` must never suspend or block for long: it runs with the lock held.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

/// A first-in, first-out async mutex: holders may suspend while holding it (unlike `NSLock`).
///
/// Used to keep whole writes of different tasks from interleaving on one stream.
final class AsyncLock: Sendable {
    private struct State {
        var held = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Locked(State())

    init() {}

    func lock() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let acquired = state.withLock { state -> Bool in
                if state.held {
                    state.waiters.append(continuation)
                    return false
                }
                state.held = true
                return true
            }
            if acquired { continuation.resume() }
        }
    }

    func unlock() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiters.isEmpty {
                state.held = false
                return nil
            }
            // Ownership passes straight to the next waiter, which keeps the order fair.
            return state.waiters.removeFirst()
        }
        next?.resume()
    }

    func withLock<T>(_ body: () async throws -> T) async rethrows -> T {
        await lock()
        defer { unlock() }
        return try await body()
    }
}
