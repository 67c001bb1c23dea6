import TidingsCore

/// What a ``ReadinessWaiter`` tells its event source, always under the waiter's lock (so the calls are
/// ordered with the waits and signals they belong to).
protocol ReadinessSource: Sendable {
    /// A task parked to wait for the next event.
    mutating func waiterParked()
    /// An event was delivered.
    mutating func signalled()
    /// The waiter was cancelled for good (called once).
    mutating func cancelled()
}

/// A source that needs no bookkeeping: the epoll reactor reports every edge and the waiter keeps it.
struct EdgeTriggeredSource: ReadinessSource {
    func waiterParked() {}
    func signalled() {}
    func cancelled() {}
}

/// Wakes one waiting task when a descriptor becomes ready in one direction.
///
/// Readiness that arrives while nobody waits is kept as a sticky flag: the next ``wait()`` returns at
/// once and the caller retries its system call. An edge can therefore never be lost between a call that
/// returned `EAGAIN` and the `wait()` after it (a spurious return only costs one more `EAGAIN`). The
/// reactor (epoll on Linux, a dispatch source elsewhere) calls ``signal()``; its own bookkeeping, if any,
/// lives in `Source`.
final class ReadinessWaiter<Source: ReadinessSource>: Sendable {
    private struct State {
        var source: Source
        var ready = false
        /// Set by the first cancellation: why this wait and every later one fail (`.closed` after a
        /// close, the reactor's error after a reactor failure).
        var failure: TransportError?
        var waiter: CheckedContinuation<Void, any Error>?
    }
    private enum Outcome { case suspend, ready, fail(any Error) }
    private let state: LockedState<State>
    private let operation: String

    init(operation: String, source: Source) {
        self.operation = operation
        state = LockedState(State(source: source))
    }

    /// Called by the reactor on a readiness event.
    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            state.source.signalled()
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
                let outcome = state.withLock { state -> Outcome in
                    if let failure = state.failure { return .fail(failure) }
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
                    state.source.waiterParked()
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
            let failure: TransportError
            if let decided = state.failure {
                failure = decided
            } else {
                failure = error ?? TransportError(kind: .closed, operation: operation)
                state.failure = failure
                state.source.cancelled()
            }
            defer { state.waiter = nil }
            return (state.waiter, failure)
        }
        waiter?.resume(throwing: failure)
    }
}
