/// One subscriber's stream of a ``ChangeBroadcaster``'s elements: an `AsyncSequence` with a bounded
/// buffer (see the broadcaster for the lag policy).
///
/// Meant for one consuming task. Iteration ends (`nil`) after ``ChangeBroadcaster/finish()`` once the
/// buffer is drained, or at once when the iterating task is cancelled; either way the subscriber leaves
/// the broadcaster. Releasing the subscription and its iterators unsubscribes too.
public struct ChangeSubscription<Element: Sendable>: AsyncSequence, Sendable {
    private let lifetime: SubscriptionLifetime<Element>

    init(_ subscriber: ChangeSubscriber<Element>) {
        lifetime = SubscriptionLifetime(subscriber)
    }

    /// Reads the subscriber's buffer.
    public struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate let lifetime: SubscriptionLifetime<Element>

        /// The next element, the lag marker in place of dropped ones, or nil when the subscription ended.
        public mutating func next() async -> Element? {
            await lifetime.subscriber.next()
        }
    }

    /// An iterator over this subscription's buffer (all iterators share it).
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(lifetime: lifetime) }
}

/// Ends its subscriber when the last subscription value or iterator holding it goes away.
private final class SubscriptionLifetime<Element: Sendable>: Sendable {
    let subscriber: ChangeSubscriber<Element>

    init(_ subscriber: ChangeSubscriber<Element>) { self.subscriber = subscriber }

    deinit { subscriber.terminate() }
}

/// One subscriber's buffer and waiting readers.
final class ChangeSubscriber<Element: Sendable>: Sendable {
    private struct State {
        var buffer: [Element] = []
        /// Index of the oldest unread element in `buffer` (read elements are compacted away in bulk).
        var head = 0
        var missed = 0
        var finished = false
        var terminated = false
        var readers: [CheckedContinuation<Element?, Never>] = []

        var unread: Int { buffer.count - head }

        mutating func take(_ lagMarker: (Int) -> Element) -> Element? {
            if missed > 0 {
                defer { missed = 0 }
                return lagMarker(missed)
            }
            guard head < buffer.count else { return nil }
            let element = buffer[head]
            head += 1
            compact()
            return element
        }

        /// Drops read elements once they are at least half the array, so it stays within twice the limit.
        mutating func compact() {
            if head == buffer.count {
                buffer.removeAll(keepingCapacity: true)
                head = 0
            } else if head * 2 >= buffer.count {
                buffer.removeFirst(head)
                head = 0
            }
        }
    }

    private let state = LockedState(State())
    private let limit: Int
    private let lagMarker: @Sendable (Int) -> Element
    private let onTermination: @Sendable () -> Void

    init(limit: Int, lagMarker: @escaping @Sendable (Int) -> Element, onTermination: @escaping @Sendable () -> Void) {
        self.limit = limit
        self.lagMarker = lagMarker
        self.onTermination = onTermination
    }

    func deliver(_ element: Element) {
        let reader: CheckedContinuation<Element?, Never>? = state.withLock { state in
            guard !state.finished, !state.terminated else { return nil }
            if !state.readers.isEmpty { return state.readers.removeFirst() }
            if state.unread >= limit {
                // The oldest unread element makes room; the reader learns how many it lost.
                state.head += 1
                state.missed += 1
                state.compact()
            }
            state.buffer.append(element)
            return nil
        }
        reader?.resume(returning: element)
    }

    func finish() {
        let readers = state.withLock { state in
            state.finished = true
            defer { state.readers.removeAll() }
            return state.readers
        }
        for reader in readers { reader.resume(returning: nil) }
    }

    /// Cancelled or released: nothing more is delivered, buffered elements are dropped.
    func terminate() {
        let readers = state.withLock { state in
            state.terminated = true
            state.buffer.removeAll()
            state.head = 0
            state.missed = 0
            defer { state.readers.removeAll() }
            return state.readers
        }
        for reader in readers { reader.resume(returning: nil) }
        onTermination()
    }

    func next() async -> Element? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Element?, Never>) in
                let ready: Element?? = state.withLock { state in
                    if state.terminated { return .some(nil) }
                    if let element = state.take(lagMarker) { return .some(element) }
                    if state.finished { return .some(nil) }
                    state.readers.append(continuation)
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            terminate()
        }
    }
}
