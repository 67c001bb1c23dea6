import Synchronization

/// Requests made while a connection is being reopened, each waiting up to its own deadline for it.
///
/// Guarantees: each wait ends exactly once — true from ``resumeAll(reconnected:)`` with `true`;
/// false from it with `false`, when its deadline passes on the injected clock, or when its task is
/// cancelled. Its timer is cancelled with it, so no sleeper outlives its wait.
public final class ReconnectWaiters: Sendable {
    private struct Waiter {
        var continuation: CheckedContinuation<Bool, Never>?
        var outcome: Bool?
        var timer: Task<Void, Never>?
    }

    private struct State {
        var nextID: UInt64 = 0
        var waiters: [UInt64: Waiter] = [:]
    }

    private let clock: any Clock<Duration>
    private let state = Mutex(State())

    /// Creates an empty set of waiters whose deadlines run on `clock`.
    public init(clock: any Clock<Duration>) {
        self.clock = clock
    }

    /// How many tasks are waiting.
    public var count: Int { state.withLock { $0.waiters.count } }

    /// Waits until the connection is back (true) or `limit` passes (false).
    ///
    /// The wait is registered before this function first suspends, so a caller that checked its
    /// connection state on its actor cannot miss a ``resumeAll(reconnected:)`` made after the check.
    public func wait(atMost limit: Duration, isolation: isolated (any Actor)? = #isolation) async -> Bool {
        let id = state.withLock { state -> UInt64 in
            state.nextID &+= 1
            state.waiters[state.nextID] = Waiter()
            return state.nextID
        }
        let timer = Task { [clock, weak self] in
            do { try await clock.sleep(for: limit) } catch { return }
            self?.finish(id, reconnected: false)
        }
        let ended = state.withLock { state -> Bool in
            guard state.waiters[id] != nil, state.waiters[id]?.outcome == nil else { return true }
            state.waiters[id]?.timer = timer
            return false
        }
        if ended { timer.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let early = state.withLock { state -> Bool? in
                    guard var waiter = state.waiters[id] else { return false }
                    if let outcome = waiter.outcome {
                        state.waiters[id] = nil
                        return outcome
                    }
                    waiter.continuation = continuation
                    state.waiters[id] = waiter
                    return nil
                }
                if let early { continuation.resume(returning: early) }
            }
        } onCancel: {
            finish(id, reconnected: false)
        }
    }

    /// Ends every wait: `true` when the connection is open again, `false` when none is coming.
    public func resumeAll(reconnected: Bool) {
        let ids = state.withLock { Array($0.waiters.keys) }
        for id in ids { finish(id, reconnected: reconnected) }
    }

    private func finish(_ id: UInt64, reconnected: Bool) {
        let ended = state.withLock { state -> (CheckedContinuation<Bool, Never>?, Task<Void, Never>?)? in
            guard var waiter = state.waiters[id], waiter.outcome == nil else { return nil }
            if let continuation = waiter.continuation {
                state.waiters[id] = nil
                return (continuation, waiter.timer)
            }
            waiter.outcome = reconnected
            let timer = waiter.timer
            waiter.timer = nil
            state.waiters[id] = waiter
            return (nil, timer)
        }
        guard let (continuation, timer) = ended else { return }
        timer?.cancel()
        continuation?.resume(returning: reconnected)
    }
}
