import TidingsCore

/// An `OpenMatesPrefetchConditionsFeed` turns system callbacks into a stream of ``OpenMatesPrefetchConditions``:
/// each callback changes the ``OpenMatesSystemSignals`` it holds, and the stream gets the resulting conditions
/// only when they differ from the last ones it got (a Wi-Fi → Wi-Fi change, or thermal nominal → nominal, yields
/// nothing).
///
/// It is the platform-neutral core of `OpenMatesSystemPrefetchConditions` (the Apple glue), and any app can
/// drive it from its own sources. Updates may come from any thread; they are applied and yielded in order under
/// one lock. The stream keeps only the newest value a slow consumer has not read (older conditions are moot).
///
/// For example:
/// ```swift
/// let feed = OpenMatesPrefetchConditionsFeed(initial: OpenMatesSystemSignals())
/// feed.update { $0.pathStatus = .satisfied }
/// for await conditions in feed.conditions { await prefetcher.update(conditions) }
/// ```
public final class OpenMatesPrefetchConditionsFeed: Sendable {
    private struct State {
        var signals: OpenMatesSystemSignals
        var last: OpenMatesPrefetchConditions
        var continuation: AsyncStream<OpenMatesPrefetchConditions>.Continuation
    }

    private let state: LockedState<State>
    /// The conditions: the initial ones first, then each change.
    public let conditions: AsyncStream<OpenMatesPrefetchConditions>

    /// Creates a feed starting from `initial`, whose conditions the stream yields first. `onTermination` runs
    /// once when the stream ends (its consumer stopped, or ``finish()``): the place to stop the system sources.
    public init(initial: OpenMatesSystemSignals, onTermination: @escaping @Sendable () -> Void = {}) {
        let (stream, continuation) = AsyncStream.makeStream(
            of: OpenMatesPrefetchConditions.self, bufferingPolicy: .bufferingNewest(1))
        continuation.onTermination = { _ in onTermination() }
        continuation.yield(initial.conditions)
        conditions = stream
        state = LockedState(State(signals: initial, last: initial.conditions, continuation: continuation))
    }

    /// The signals as last updated.
    public var signals: OpenMatesSystemSignals { state.withLock { $0.signals } }

    /// Applies one change of the signals; yields and returns the new conditions when they changed, else nil.
    @discardableResult
    public func update(_ change: (inout OpenMatesSystemSignals) -> Void) -> OpenMatesPrefetchConditions? {
        state.withLock { state in
            change(&state.signals)
            let conditions = state.signals.conditions
            guard conditions != state.last else { return nil }
            state.last = conditions
            state.continuation.yield(conditions)
            return conditions
        }
    }

    /// Ends the stream (and runs `onTermination`).
    public func finish() {
        state.withLock { $0.continuation }.finish()
    }
}
