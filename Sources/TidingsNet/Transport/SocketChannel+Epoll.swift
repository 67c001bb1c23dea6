#if os(Linux)
    import COpenSSL
    import Foundation
    import Glibc

    /// Wakes one waiting task when a descriptor becomes ready in one direction.
    ///
    /// The reactor reports edges (EPOLLET), so readiness that arrives while nobody waits is kept as a
    /// sticky flag: the next `wait()` returns at once and the caller retries its system call. An
    /// edge can therefore never be lost between a call that returned `EAGAIN` and the `wait()` after it.
    final class ReadinessWaiter: @unchecked Sendable {
        private struct State {
            var ready = false
            var cancelled = false
            /// Why later waits fail once cancelled: `.closed` after a close, the reactor's error after
            /// a reactor failure.
            var failure: TransportError?
            var waiter: CheckedContinuation<Void, any Error>?
        }
        private let state = Locked(State())
        private let operation: String

        init(operation: String) { self.operation = operation }

        /// Called by the reactor thread on a readiness edge.
        func signal() {
            let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard let waiter = state.waiter else {
                    state.ready = true
                    return nil
                }
                state.waiter = nil
                return waiter
            }
            waiter?.resume()
        }

        /// Suspends until the descriptor may be ready; throws when cancelled or when the channel closes.
        func wait() async throws {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    enum Outcome { case suspend, ready, fail(any Error) }
                    let outcome = state.withLock { state -> Outcome in
                        if state.cancelled {
                            return .fail(state.failure ?? TransportError(kind: .closed, operation: operation))
                        }
                        // Checked under the lock, so a racing cancellation is seen here or by onCancel.
                        if Task.isCancelled { return .fail(CancellationError()) }
                        if state.waiter != nil {
                            return .fail(TransportError(kind: .concurrentRead, operation: operation))
                        }
                        if state.ready {
                            state.ready = false
                            return .ready
                        }
                        state.waiter = continuation
                        return .suspend
                    }
                    switch outcome {
                    case .suspend: break
                    case .ready: continuation.resume()
                    case .fail(let error): continuation.resume(throwing: error)
                    }
                }
            } onCancel: {
                let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                    defer { state.waiter = nil }
                    return state.waiter
                }
                waiter?.resume(throwing: CancellationError())
            }
        }

        /// Fails a pending wait and every later one with `error`, or with `.closed` when nil.
        ///
        /// The first cancellation decides the error: a close after a reactor failure keeps reporting
        /// the failure.
        func cancel(with error: TransportError? = nil) {
            let (waiter, failure) = state.withLock { state -> (CheckedContinuation<Void, any Error>?, TransportError) in
                if !state.cancelled {
                    state.cancelled = true
                    state.failure = error ?? TransportError(kind: .closed, operation: operation)
                }
                defer { state.waiter = nil }
                return (state.waiter, state.failure ?? TransportError(kind: .closed, operation: operation))
            }
            waiter?.resume(throwing: failure)
        }
    }

    /// One thread blocked in `epoll_wait` for every socket of the process: no thread per connection,
    /// and the Swift cooperative pool never blocks.
    ///
    /// Descriptors are registered once, edge-triggered, for both directions; events carry a
    /// registration id rather than the descriptor, so an event that was already fetched for a closed
    /// descriptor (whose number the kernel may have reused) finds no registration and is dropped.
    final class EpollReactor: @unchecked Sendable {
        static let shared = EpollReactor()

        private struct Registration {
            var readable: ReadinessWaiter
            var writable: ReadinessWaiter
        }

        private let descriptor: Int32
        /// Runs the jobs of tasks that prefer this reactor's thread (connection readers).
        let executor = ReactorExecutor()
        private let registrations = Locked<[UInt64: Registration]>([:])
        private let nextID = Locked<UInt64>(0)
        /// Set once `epoll_wait` failed for good: the error every registration, present and future, gets.
        private let failure = Locked<TransportError?>(nil)

        /// One `epoll_wait` call (descriptor, events, capacity, timeout in ms or -1): the number of
        /// events, or -1 with the `errno`.
        typealias WaitFunction =
            @Sendable (Int32, UnsafeMutablePointer<epoll_event>, Int32, Int32) -> (count: Int32, error: Int32)

        private static let systemWait: WaitFunction = { descriptor, events, capacity, timeout in
            let count = epoll_wait(descriptor, events, capacity, timeout)
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
            let thread = Thread { [descriptor, registrations, failure, executor] in
                Self.run(
                    descriptor: descriptor, registrations: registrations, failure: failure, executor: executor,
                    wait: wait)
            }
            thread.name = "tidings.net.reactor"
            thread.start()
        }

        /// Starts reporting readiness of `fd` to the two waiters; returns the id to unregister with.
        func register(_ fd: Int32, readable: ReadinessWaiter, writable: ReadinessWaiter) -> UInt64 {
            let id = nextID.withLock { value -> UInt64 in
                value += 1
                return value
            }
            let failed = failure.withLock { failure -> TransportError? in
                // Under the failure lock, so a registration either sees the failure or is failed by it.
                if failure == nil {
                    registrations.withLock { $0[id] = Registration(readable: readable, writable: writable) }
                }
                return failure
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
                registrations.withLock { $0[id] = nil }
                readable.cancel()
                writable.cancel()
            }
            return id
        }

        /// Stops reporting for `fd`; call before closing the descriptor.
        func unregister(_ fd: Int32, id: UInt64) {
            registrations.withLock { $0[id] = nil }
            var event = epoll_event()
            _ = epoll_ctl(descriptor, EPOLL_CTL_DEL, fd, &event)
        }

        private static func run(
            descriptor: Int32, registrations: Locked<[UInt64: Registration]>, failure: Locked<TransportError?>,
            executor: ReactorExecutor, wait: WaitFunction
        ) {
            let capacity = 128
            let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: capacity)
            defer { events.deallocate() }
            let readMask = EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue
            let writeMask = EPOLLOUT.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue
            executor.reactorStarted()
            while true {
                let (count, code) = wait(descriptor, events, Int32(capacity), executor.waitTimeout())
                executor.awake()
                if count < 0 {
                    if code == EINTR { continue }
                    // No wake-up will ever come again: every waiting connection would hang silently.
                    // Fail them all (and every later registration) with the reactor's error instead.
                    let error = TransportError(
                        kind: .system, operation: "poll", code: code,
                        detail: "the socket reactor failed: \(errnoDescription(code))")
                    let failed = failure.withLock { failure -> [Registration] in
                        failure = error
                        return registrations.withLock { registrations in
                            defer { registrations = [:] }
                            return Array(registrations.values)
                        }
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
                    guard let registration = registrations.withLock({ $0[id] }) else { continue }
                    if flags & readMask != 0 { registration.readable.signal() }
                    if flags & writeMask != 0 { registration.writable.signal() }
                }
                // Readers resumed just now run here, on this thread, before the next wait.
                executor.runQueuedJobs()
            }
        }
    }

    /// A non-blocking socket descriptor with its read and write readiness.
    ///
    /// System calls on the descriptor run under `state`'s lock after checking `closed`, so once
    /// `close()` returns no call can touch a descriptor number the kernel may have reused.
    final class SocketChannel: @unchecked Sendable {
        private struct State {
            var closed = false
            var registration: UInt64?
        }
        let descriptor: Int32
        let readable = ReadinessWaiter(operation: "read")
        let writable = ReadinessWaiter(operation: "write")
        let reactor: EpollReactor
        private let state = Locked(State())

        /// Wraps `descriptor` and registers it with the reactor.
        ///
        /// For a socket that is still connecting, create the channel after calling `connect`, so
        /// that the first write-readiness edge means "connected" (or "failed").
        init(descriptor: Int32, reactor: EpollReactor = .shared) {
            self.descriptor = descriptor
            self.reactor = reactor
            let id = reactor.register(descriptor, readable: readable, writable: writable)
            state.withLock { $0.registration = id }
        }

        deinit { close() }

        var isClosed: Bool { state.withLock { $0.closed } }

        /// Runs a non-blocking system call on the open descriptor, or fails with `.closed`.
        func withDescriptor<T>(operation: String, _ body: (Int32) -> T) throws -> T {
            try state.withLock { state in
                guard !state.closed else { throw TransportError(kind: .closed, operation: operation) }
                return body(descriptor)
            }
        }

        func close() {
            let first = state.withLock { state -> Bool in
                guard !state.closed else { return false }
                state.closed = true
                if let id = state.registration { reactor.unregister(descriptor, id: id) }
                _ = systemClose(descriptor)
                return true
            }
            guard first else { return }
            readable.cancel()
            writable.cancel()
        }
    }
#endif
