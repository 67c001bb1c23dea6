#if os(Linux)
    // epoll comes through COpenSSL's shim (Swift's Glibc module does not export it); the manifest defines
    // TIDINGS_OPENSSL wherever it builds Linux, and COpenSSL is imported only under it.
    #if TIDINGS_OPENSSL
        import COpenSSL
    #endif
    import Foundation
    import Glibc
    import TidingsCore

    /// A waiter for one direction of an epoll-registered descriptor: every edge is reported, so it
    /// needs no source bookkeeping.
    typealias EdgeReadinessWaiter = ReadinessWaiter<EdgeTriggeredSource>

    extension ReadinessWaiter where Source == EdgeTriggeredSource {
        convenience init(operation: String) { self.init(operation: operation, source: EdgeTriggeredSource()) }
    }

    /// One thread blocked in `epoll_wait` for every socket of the process: no thread per connection,
    /// and the Swift cooperative pool never blocks.
    ///
    /// Descriptors are registered once, edge-triggered, for both directions; events carry a
    /// registration id rather than the descriptor, so an event that was already fetched for a closed
    /// descriptor (whose number the kernel may have reused) finds no registration and is dropped.
    final class EpollReactor: Sendable {
        static let shared = EpollReactor()

        private struct Registration {
            var readable: EdgeReadinessWaiter
            var writable: EdgeReadinessWaiter
        }

        private struct State {
            var registrations: [UInt64: Registration] = [:]
            /// The last registration id handed out (the executor's wake-up event is 0).
            var lastID: UInt64 = 0
            /// Set once `epoll_wait` failed for good: the error every registration, present and future, gets.
            var failure: TransportError?
            /// Registrations whose reader must be woken at a monotonic time (nanoseconds) even if no
            /// readiness comes: coalesced reads (``ReadCoalescer``) wait with a deadline.
            var readDeadlines: [UInt64: UInt64] = [:]
        }

        private let descriptor: Int32
        /// Runs the jobs of tasks that prefer this reactor's thread (connection readers).
        let executor = ReactorExecutor()
        private let state = LockedState(State())

        /// One `epoll_wait` call (descriptor, events, capacity, timeout in nanoseconds or -1): the
        /// number of events, or -1 with the `errno`.
        typealias WaitFunction =
            @Sendable (Int32, UnsafeMutablePointer<epoll_event>, Int32, Int64) -> (count: Int32, error: Int32)

        /// Whether the kernel lacks `epoll_pwait2` (before Linux 5.11): timeouts are then rounded up to
        /// whole milliseconds.
        private static let finePrecisionMissing = LockedState(false)

        private static let systemWait: WaitFunction = { descriptor, events, capacity, timeout in
            if timeout > 0, !finePrecisionMissing.withLock({ $0 }) {
                var limit = timespec(tv_sec: Int(timeout / 1_000_000_000), tv_nsec: Int(timeout % 1_000_000_000))
                let count = epoll_pwait2(descriptor, events, capacity, &limit, nil)
                let code = count < 0 ? errno : 0
                guard code == ENOSYS else { return (count, code) }
                finePrecisionMissing.withLock { $0 = true }
            }
            let milliseconds = timeout <= 0 ? Int32(timeout) : Int32(clamping: (timeout + 999_999) / 1_000_000)
            let count = epoll_wait(descriptor, events, capacity, milliseconds)
            return (count, count < 0 ? errno : 0)
        }

        /// The event id of the executor's wake-up descriptor (registrations count from 1).
        private static let wakeID: UInt64 = 0

        /// A reactor with its own epoll instance and thread; `wait` replaces `epoll_wait` in tests
        /// that inject a failure (the process-wide ``shared`` reactor always uses the system call).
        init(wait: @escaping WaitFunction = EpollReactor.systemWait) {
            descriptor = epoll_create1(Int32(EPOLL_CLOEXEC))
            if executor.wakeDescriptor >= 0 {
                var event = epoll_event()
                event.events = EPOLLIN.rawValue | EPOLLET.rawValue
                event.data.u64 = Self.wakeID
                if epoll_ctl(descriptor, EPOLL_CTL_ADD, executor.wakeDescriptor, &event) != 0 { executor.stop() }
            }
            let thread = Thread { [descriptor, state, executor] in
                Self.run(descriptor: descriptor, state: state, executor: executor, wait: wait)
            }
            thread.name = "tidings.net.reactor"
            thread.start()
        }

        /// Starts reporting readiness of `fd` to the two waiters; returns the id to unregister with.
        func register(_ fd: Int32, readable: EdgeReadinessWaiter, writable: EdgeReadinessWaiter) -> UInt64 {
            let (id, failed) = state.withLock { state -> (UInt64, TransportError?) in
                state.lastID += 1
                // Under the same lock as the failure, so a registration either sees it or is failed by it.
                if state.failure == nil {
                    state.registrations[state.lastID] = Registration(readable: readable, writable: writable)
                }
                return (state.lastID, state.failure)
            }
            if let failed {
                readable.cancel(with: failed)
                writable.cancel(with: failed)
                return id
            }
            var event = epoll_event()
            event.events =
                EPOLLIN.rawValue | EPOLLOUT.rawValue | EPOLLRDHUP.rawValue | EPOLLET.rawValue
            event.data.u64 = id
            if epoll_ctl(descriptor, EPOLL_CTL_ADD, fd, &event) != 0 {
                // Without a registration no wake-up would ever come: fail the waits instead of hanging.
                state.withLock { $0.registrations[id] = nil }
                readable.cancel()
                writable.cancel()
            }
            return id
        }

        /// Signals the readable waiter of registration `id` at `deadline` (monotonic nanoseconds, see
        /// ``monotonicNanoseconds()``) unless readiness comes first; nil cancels a pending deadline.
        func wakeReader(of id: UInt64, at deadline: UInt64?) {
            state.withLock { $0.readDeadlines[id] = deadline }
            // A reader on another thread may set a deadline while the reactor sleeps without one.
            if deadline != nil, !executor.isCurrentThread { executor.wakeIfSleeping() }
        }

        /// Stops reporting for `fd`; call before closing the descriptor.
        func unregister(_ fd: Int32, id: UInt64) {
            state.withLock {
                $0.registrations[id] = nil
                $0.readDeadlines[id] = nil
            }
            var event = epoll_event()
            _ = epoll_ctl(descriptor, EPOLL_CTL_DEL, fd, &event)
        }

        private static func run(
            descriptor: Int32, state: LockedState<State>, executor: ReactorExecutor, wait: WaitFunction
        ) {
            let capacity = 128
            let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: capacity)
            defer { events.deallocate() }
            let readMask = EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue
            let writeMask = EPOLLOUT.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue
            executor.reactorStarted()
            while true {
                var timeout = Int64(executor.waitTimeout())
                if timeout != 0, let earliest = state.withLock({ $0.readDeadlines.values.min() }) {
                    let now = monotonicNanoseconds()
                    timeout = earliest > now ? Int64(clamping: earliest - now) : 0
                }
                let (count, code) = wait(descriptor, events, Int32(capacity), timeout)
                executor.awake()
                Self.fireReadDeadlines(state: state)
                if count < 0 {
                    if code == EINTR { continue }
                    // No wake-up will ever come again: every waiting connection would hang silently.
                    // Fail them all (and every later registration) with the reactor's error instead.
                    let error = TransportError(
                        kind: .system, operation: "poll", code: code,
                        detail: "the socket reactor failed: \(errnoDescription(code))")
                    let failed = state.withLock { state -> [Registration] in
                        state.failure = error
                        defer { state.registrations = [:] }
                        return Array(state.registrations.values)
                    }
                    for registration in failed {
                        registration.readable.cancel(with: error)
                        registration.writable.cancel(with: error)
                    }
                    executor.stop()
                    return
                }
                for index in 0..<Int(count) {
                    let flags = events[index].events
                    let id = events[index].data.u64
                    if id == Self.wakeID {
                        executor.drainWakeDescriptor()
                        continue
                    }
                    let readable = flags & readMask != 0
                    let found = state.withLock { state -> Registration? in
                        // Readiness came before the deadline: it must not wake the next wait spuriously.
                        if readable, !state.readDeadlines.isEmpty { state.readDeadlines[id] = nil }
                        return state.registrations[id]
                    }
                    guard let registration = found else { continue }
                    if readable { registration.readable.signal() }
                    if flags & writeMask != 0 { registration.writable.signal() }
                }
                // Readers resumed just now run here, on this thread, before the next wait.
                executor.runQueuedJobs()
            }
        }

        /// Signals the readers whose deadlines have passed.
        private static func fireReadDeadlines(state: LockedState<State>) {
            let due = state.withLock { state -> [Registration] in
                guard !state.readDeadlines.isEmpty else { return [] }
                let now = monotonicNanoseconds()
                var due: [Registration] = []
                for (id, deadline) in state.readDeadlines where deadline <= now {
                    state.readDeadlines[id] = nil
                    if let registration = state.registrations[id] { due.append(registration) }
                }
                return due
            }
            for registration in due { registration.readable.signal() }
        }
    }

    /// A non-blocking socket descriptor with its read and write readiness.
    ///
    /// System calls on the descriptor go through ``withDescriptor(operation:_:)``, which refuses them once
    /// ``close()`` began (see ``GuardedDescriptor``); closing unregisters and closes the descriptor under
    /// the same lock.
    final class SocketChannel: Sendable {
        let readable: EdgeReadinessWaiter
        let writable: EdgeReadinessWaiter
        let reactor: EpollReactor
        private let guarded: GuardedDescriptor
        private let registration: UInt64

        /// Wraps `descriptor` and registers it with the reactor.
        ///
        /// For a socket that is still connecting, create the channel after calling `connect`, so
        /// that the first write-readiness edge means "connected" (or "failed").
        init(descriptor: Int32, reactor: EpollReactor = .shared) {
            let readable = EdgeReadinessWaiter(operation: "read")
            let writable = EdgeReadinessWaiter(operation: "write")
            self.readable = readable
            self.writable = writable
            self.reactor = reactor
            guarded = GuardedDescriptor(descriptor)
            registration = reactor.register(descriptor, readable: readable, writable: writable)
        }

        deinit { close() }

        var isClosed: Bool { guarded.isClosed }

        /// Runs a non-blocking system call on the open descriptor, or fails with `.closed`.
        func withDescriptor<T>(operation: String, _ body: (Int32) -> T) throws(TransportError) -> T {
            try guarded.withDescriptor(operation: operation, body)
        }

        /// Wakes the reader at `deadline` (monotonic nanoseconds) unless the socket becomes readable
        /// first; nil cancels.
        func wakeReader(at deadline: UInt64?) {
            reactor.wakeReader(of: registration, at: deadline)
        }

        func close() {
            let first = guarded.close { [reactor, registration] descriptor in
                reactor.unregister(descriptor, id: registration)
                _ = systemClose(descriptor)
            }
            guard first else { return }
            readable.cancel()
            writable.cancel()
        }
    }
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The monotonic clock in nanoseconds (`CLOCK_MONOTONIC`), the time base of read deadlines.
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
}
