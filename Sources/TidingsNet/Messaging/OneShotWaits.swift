import TidingsCore

/// A table of one-shot waits by key, behind the request layer's correlator and reconnect waiters.
///
/// Each key ends exactly once (``finish(_:with:)`` returns true for that one call), whoever comes
/// first — a response, a deadline on the clock, cancellation, or `finishAll`. An outcome that arrives
/// before its task starts waiting is kept for it, and the key stays taken until that task takes it,
/// so a key is never handed out twice while someone may still be matched to it.
final class OneShotWaits<Value: Sendable>: Sendable {
    private struct Entry {
        var continuation: CheckedContinuation<Value, Never>?
        var outcome: Value?
        var timer: Task<Void, Never>?
    }

    private struct State {
        var keys: RequestIDSequence
        var entries: [UInt64: Entry] = [:]
    }

    private let clock: any Clock<Duration>
    private let state: LockedState<State>

    init(clock: any Clock<Duration>, keys: ClosedRange<UInt64>) {
        self.clock = clock
        self.state = LockedState(State(keys: RequestIDSequence(range: keys)))
    }

    var count: Int { state.withLock { $0.entries.count } }

    /// Takes the next free key, or nil when every key is taken.
    func reserve() -> UInt64? {
        state.withLock { state in
            var keys = state.keys
            let key = keys.take(isTaken: { state.entries[$0] != nil }, taken: state.entries.count)
            state.keys = keys
            guard let key else { return nil }
            state.entries[key.rawValue] = Entry()
            return key.rawValue
        }
    }

    /// Ends `key` with `outcome` once `delay` has passed on the clock, unless it ended before.
    func expire(_ key: UInt64, after delay: Duration, with outcome: Value) {
        let timer = Task { [clock, weak self] in
            do { try await clock.sleep(for: delay) } catch { return }
            self?.finish(key, with: outcome)
        }
        let ended = state.withLock { state -> Bool in
            guard state.entries[key]?.outcome == nil, state.entries[key] != nil else { return true }
            state.entries[key]?.timer = timer
            return false
        }
        if ended { timer.cancel() }
    }

    /// Waits for `key`'s outcome; a cancelled task ends it with `cancelled` (unless it ended before).
    func wait(_ key: UInt64, cancelled: Value) async -> Value {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Value, Never>) in
                let early = state.withLock { state -> Value? in
                    guard var entry = state.entries[key] else { return cancelled }
                    if let outcome = entry.outcome {
                        state.entries[key] = nil
                        return outcome
                    }
                    entry.continuation = continuation
                    state.entries[key] = entry
                    return nil
                }
                if let early { continuation.resume(returning: early) }
            }
        } onCancel: {
            finish(key, with: cancelled)
        }
    }

    /// Ends `key` with `outcome`; false when it already ended (or was never reserved).
    @discardableResult
    func finish(_ key: UInt64, with outcome: Value) -> Bool {
        let ended = state.withLock { state -> (CheckedContinuation<Value, Never>?, Task<Void, Never>?)? in
            guard var entry = state.entries[key], entry.outcome == nil else { return nil }
            if let continuation = entry.continuation {
                state.entries[key] = nil
                return (continuation, entry.timer)
            }
            entry.outcome = outcome
            let timer = entry.timer
            entry.timer = nil
            state.entries[key] = entry
            return (nil, timer)
        }
        guard let (continuation, timer) = ended else { return false }
        timer?.cancel()
        continuation?.resume(returning: outcome)
        return true
    }

    /// Ends every key that has not ended with `outcome`.
    func finishAll(with outcome: Value) {
        let keys = state.withLock { Array($0.entries.keys) }
        for key in keys { finish(key, with: outcome) }
    }
}
