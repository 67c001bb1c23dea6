import Dispatch
import Foundation
import TidingsCore

// Apple platforms: readiness from dispatch sources (kqueue underneath), resumed only while a task
// waits. Linux uses the epoll reactor of SocketChannel+Epoll.swift instead: one edge-triggered
// registration per socket and a sticky readiness flag, with no suspend/resume bookkeeping to get wrong.
#if !os(Linux)
    /// One serial queue for every socket's readiness events: handlers only resume a continuation,
    /// so a single queue acts as the reactor thread without a thread per connection.
    let reactorQueue = DispatchQueue(label: "tidings.net.reactor")

    /// Waits, without blocking a thread, until a non-blocking descriptor is readable or writable.
    ///
    /// The dispatch source is resumed only while a task waits and suspended again after each event,
    /// since a level-triggered source with nobody waiting would fire continuously.
    // @unchecked: not a value box — the dispatch source (not `Sendable` in the SDK) is set in init and then
    // touched only under `state`'s lock, which also orders its suspend/resume/cancel calls.
    final class DispatchReadinessWaiter: @unchecked Sendable {
        private struct State {
            var suspended = true
            var cancelled = false
            var waiter: CheckedContinuation<Void, any Error>?
        }
        private let source: any DispatchSourceProtocol
        private let state = LockedState(State())
        private let operation: String

        init(source: any DispatchSourceProtocol, operation: String) {
            self.source = source
            self.operation = operation
            source.setEventHandler { [weak self] in self?.fire() }
        }

        private func fire() {
            let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard !state.cancelled else { return nil }
                let waiter = state.waiter
                state.waiter = nil
                if !state.suspended {
                    source.suspend()
                    state.suspended = true
                }
                return waiter
            }
            waiter?.resume()
        }

        /// Suspends until the descriptor is ready; throws when cancelled or when the channel closes.
        func wait() async throws {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    let failure = state.withLock { state -> (any Error)? in
                        if state.cancelled { return TransportError(kind: .closed, operation: operation) }
                        // Checked under the lock so that a cancellation racing with this registration is
                        // seen either here or by the cancellation handler below.
                        if Task.isCancelled { return CancellationError() }
                        if state.waiter != nil { return TransportError(kind: .concurrentRead, operation: operation) }
                        state.waiter = continuation
                        if state.suspended {
                            source.resume()
                            state.suspended = false
                        }
                        return nil
                    }
                    if let failure { continuation.resume(throwing: failure) }
                }
            } onCancel: {
                let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                    let waiter = state.waiter
                    state.waiter = nil
                    return waiter
                }
                waiter?.resume(throwing: CancellationError())
            }
        }

        /// Cancels the source (its cancel handler runs once) and fails a pending wait.
        func cancel() {
            let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard !state.cancelled else { return nil }
                state.cancelled = true
                source.cancel()
                // A suspended (or never activated) source must be resumed to deliver its cancel handler
                // and to be released safely.
                if state.suspended {
                    source.resume()
                    state.suspended = false
                }
                let waiter = state.waiter
                state.waiter = nil
                return waiter
            }
            waiter?.resume(throwing: TransportError(kind: .closed, operation: operation))
        }
    }

    /// A non-blocking socket descriptor with its read and write readiness sources.
    ///
    /// System calls on the descriptor go through ``withDescriptor(operation:_:)``, which refuses them once
    /// ``close()`` began (see ``GuardedDescriptor``). The descriptor itself is closed only after both
    /// dispatch sources finished cancelling.
    final class SocketChannel: Sendable {
        let readable: DispatchReadinessWaiter
        let writable: DispatchReadinessWaiter
        private let guarded: GuardedDescriptor

        init(descriptor: Int32) {
            guarded = GuardedDescriptor(descriptor)
            let readSource = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: reactorQueue)
            let writeSource = DispatchSource.makeWriteSource(fileDescriptor: descriptor, queue: reactorQueue)
            readable = DispatchReadinessWaiter(source: readSource, operation: "read")
            writable = DispatchReadinessWaiter(source: writeSource, operation: "write")
            let pendingCancels = LockedState(2)
            let closeWhenBothCancelled: @Sendable () -> Void = {
                let last = pendingCancels.withLock { pending -> Bool in
                    pending -= 1
                    return pending == 0
                }
                if last { _ = systemClose(descriptor) }
            }
            readSource.setCancelHandler(handler: closeWhenBothCancelled)
            writeSource.setCancelHandler(handler: closeWhenBothCancelled)
        }

        deinit { close() }

        var isClosed: Bool { guarded.isClosed }

        /// Runs a non-blocking system call on the open descriptor, or fails with `.closed`.
        func withDescriptor<T>(operation: String, _ body: (Int32) -> T) throws(TransportError) -> T {
            try guarded.withDescriptor(operation: operation, body)
        }

        func close() {
            guard guarded.close() else { return }
            readable.cancel()
            writable.cancel()
        }
    }
#endif
