import Testing
import TidingsCore

/// Per-subscriber change streams (issue 10): every subscriber sees every element, a lagging one learns how
/// many it lost, and cancellation, release and `finish()` end subscriptions. No test waits on time: each
/// reads what is already buffered or what `finish()` ends.
@Suite(.timeLimit(.minutes(1))) struct ChangeBroadcasterTests {
    enum Event: Sendable, Equatable {
        case value(Int)
        case missed(Int)
    }

    static func broadcaster() -> ChangeBroadcaster<Event> { ChangeBroadcaster { .missed($0) } }

    static func drain(_ subscription: ChangeSubscription<Event>) async -> [Event] {
        var events: [Event] = []
        for await event in subscription { events.append(event) }
        return events
    }

    @Test func everySubscriberSeesEveryElementInOrder() async {
        let broadcaster = Self.broadcaster()
        let first = broadcaster.subscribe()
        let second = broadcaster.subscribe()
        for value in 0..<10 { broadcaster.publish(.value(value)) }
        broadcaster.finish()
        let expected = (0..<10).map(Event.value)
        #expect(await Self.drain(first) == expected)
        #expect(await Self.drain(second) == expected)
    }

    @Test func aSubscriberSeesOnlyWhatIsPublishedAfterItSubscribed() async {
        let broadcaster = Self.broadcaster()
        broadcaster.publish(.value(0))
        let late = broadcaster.subscribe()
        broadcaster.publish(.value(1))
        broadcaster.finish()
        #expect(await Self.drain(late) == [.value(1)])
    }

    @Test func aLaggingSubscriberReadsOneMarkerThenTheNewestAndOthersAreUnaffected() async {
        let broadcaster = Self.broadcaster()
        let slow = broadcaster.subscribe(bufferingLimit: 3)
        let roomy = broadcaster.subscribe(bufferingLimit: 100)
        for value in 0..<10 { broadcaster.publish(.value(value)) }
        var iterator = slow.makeAsyncIterator()
        #expect(await iterator.next() == .missed(7))
        #expect(await iterator.next() == .value(7))
        // Lagging again after the marker was read: a second marker for the new loss only.
        for value in 10..<14 { broadcaster.publish(.value(value)) }
        broadcaster.finish()
        var rest: [Event] = []
        while let event = await iterator.next() { rest.append(event) }
        #expect(rest == [.missed(3), .value(11), .value(12), .value(13)])
        #expect(await Self.drain(roomy) == (0..<14).map(Event.value))
    }

    @Test func aSubscriberThatReadsAsItGoesNeverLags() async {
        let broadcaster = Self.broadcaster()
        let subscription = broadcaster.subscribe(bufferingLimit: 1)
        var iterator = subscription.makeAsyncIterator()
        for value in 0..<100 {
            broadcaster.publish(.value(value))
            #expect(await iterator.next() == .value(value))
        }
    }

    @Test func cancellingTheReadingTaskRemovesTheSubscriberAndEndsItsStream() async {
        let broadcaster = Self.broadcaster()
        let kept = broadcaster.subscribe()
        let cancelled = broadcaster.subscribe()
        #expect(broadcaster.subscriberCount == 2)
        let reader = Task {
            var seen: [Event] = []
            for await event in cancelled { seen.append(event) }
            return seen
        }
        reader.cancel()
        _ = await reader.value
        #expect(broadcaster.subscriberCount == 1)
        broadcaster.publish(.value(1))
        var iterator = cancelled.makeAsyncIterator()
        #expect(await iterator.next() == nil)
        broadcaster.finish()
        #expect(await Self.drain(kept) == [.value(1)])
    }

    @Test func aWaitingReaderIsWokenByCancellation() async {
        let broadcaster = Self.broadcaster()
        let subscription = broadcaster.subscribe()
        let started = ChangeBroadcaster<Int> { $0 }
        let signal = started.subscribe()
        let reader = Task {
            started.publish(0)
            var count = 0
            for await _ in subscription { count += 1 }
            return count
        }
        var signals = signal.makeAsyncIterator()
        _ = await signals.next()
        reader.cancel()
        #expect(await reader.value == 0)
        #expect(broadcaster.subscriberCount == 0)
    }

    @Test func releasingASubscriptionRemovesTheSubscriber() {
        let broadcaster = Self.broadcaster()
        do {
            let subscription = broadcaster.subscribe()
            _ = subscription.makeAsyncIterator()
            #expect(broadcaster.subscriberCount == 1)
        }
        #expect(broadcaster.subscriberCount == 0)
    }

    @Test func finishEndsEveryWaitingReaderAndLaterSubscriptions() async {
        let broadcaster = Self.broadcaster()
        let subscriptions = (0..<3).map { _ in broadcaster.subscribe() }
        let readers = subscriptions.map { subscription in Task { await Self.drain(subscription) } }
        broadcaster.publish(.value(1))
        broadcaster.finish()
        for reader in readers { #expect(await reader.value == [.value(1)]) }
        #expect(broadcaster.subscriberCount == 0)
        broadcaster.publish(.value(2))
        #expect(await Self.drain(broadcaster.subscribe()) == [])
    }
}
