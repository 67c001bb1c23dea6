/// Fans one engine's changes out to any number of subscribers, each with a bounded buffer of its own.
///
/// Every ``subscribe(bufferingLimit:)`` returns a fresh ``ChangeSubscription`` that receives every element
/// published after the call, in publishing order; one subscriber never takes another's elements.
///
/// **When a subscriber lags** (its buffer holds `bufferingLimit` elements and another one is published),
/// the oldest buffered element is dropped and counted. The next element that subscriber reads is then
/// the lag marker `lagMarker(n)` — "you missed `n` changes, re-read your state" — followed by the
/// newer elements still buffered. So a subscriber either sees every change or learns that it did not,
/// and memory stays bounded by `bufferingLimit` elements per subscriber. Other subscribers are unaffected.
///
/// A subscription ends, and is removed from the broadcaster, when the task iterating it is cancelled, or
/// when the subscription and its iterators are released. ``finish()`` ends every subscription after it
/// has delivered what it buffered; subscribing after it gives a subscription that is already finished.
///
/// Publish from one serial context (an actor) to get one order for everyone: elements published
/// concurrently from several threads reach each subscriber in some order, not necessarily the same one.
public final class ChangeBroadcaster<Element: Sendable>: Sendable {
    private struct State {
        var subscribers: [UInt64: ChangeSubscriber<Element>] = [:]
        var nextID: UInt64 = 0
        var finished = false
    }

    private let state = LockedState(State())
    private let lagMarker: @Sendable (Int) -> Element

    /// Creates a broadcaster.
    ///
    /// - Parameter lagMarker: The element a lagging subscriber reads in place of the `missed` (≥ 1)
    ///   elements its buffer dropped.
    public init(lagMarker: @escaping @Sendable (_ missed: Int) -> Element) {
        self.lagMarker = lagMarker
    }

    /// A new subscriber's stream of every element published from now on.
    ///
    /// - Parameter bufferingLimit: How many unread elements the subscriber keeps (at least 1); beyond that
    ///   the oldest are dropped and replaced by one lag marker.
    public func subscribe(bufferingLimit: Int = 256) -> ChangeSubscription<Element> {
        let limit = max(1, bufferingLimit)
        return state.withLock { state in
            let id = state.nextID
            state.nextID &+= 1
            let subscriber = ChangeSubscriber<Element>(
                limit: limit, lagMarker: lagMarker,
                onTermination: { [weak self] in self?.remove(id) })
            if state.finished {
                subscriber.finish()
            } else {
                state.subscribers[id] = subscriber
            }
            return ChangeSubscription(subscriber)
        }
    }

    /// Hands `element` to every current subscriber; nothing after ``finish()``.
    public func publish(_ element: Element) {
        let subscribers = state.withLock { state in state.finished ? [] : Array(state.subscribers.values) }
        for subscriber in subscribers { subscriber.deliver(element) }
    }

    /// Ends every subscription once it has delivered what it buffered; later publishes are ignored.
    public func finish() {
        let subscribers = state.withLock { state in
            state.finished = true
            let all = Array(state.subscribers.values)
            state.subscribers.removeAll()
            return all
        }
        for subscriber in subscribers { subscriber.finish() }
    }

    /// How many subscriptions are live (not yet cancelled, released or finished).
    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    private func remove(_ id: UInt64) {
        _ = state.withLock { $0.subscribers.removeValue(forKey: id) }
    }
}
