import Foundation
import Testing
import TidingsCore
import TidingsKecalek
import TidingsSandbox

/// Every screen gets its own stream of the client's changes (issue 10): none steals another's events, a
/// lagging one is told what it missed, and cancellation and ``KecalekClient/close()`` end streams. Each test
/// reads streams only after the client is closed, so what they hold never depends on scheduling.
@Suite(.timeLimit(.minutes(1))) struct KecalekChangeStreamTests {
    private let conversation = KecalekHarness.conversation

    static func drain(_ changes: KecalekChanges) async -> [KecalekChange] {
        var all: [KecalekChange] = []
        for await change in changes { all.append(change) }
        return all
    }

    @Test func twoSubscribersBothSeeEveryChange() async throws {
        let harness = try await KecalekHarness(seeded: 6)
        let list = harness.client.changes
        let detail = harness.client.changes
        let page = await harness.client.messages(conversation: conversation)
        _ = await harness.client.messages(conversation: "random")
        await harness.client.close()
        let seenByList = await Self.drain(list)
        let seenByDetail = await Self.drain(detail)
        #expect(seenByList == seenByDetail)
        #expect(
            seenByList.contains(.messagesStored(conversationID: conversation, messageIDs: page.newMessageIDs)))
        #expect(seenByList.last == .connection(.disconnected))
    }

    @Test func aLaggingSubscriberGetsTheMarkerAndTheOthersAreUnaffected() async throws {
        let harness = try await KecalekHarness(seeded: 4)
        let slow = harness.client.changes(bufferingLimit: 2)
        let reader = harness.client.changes
        for text in ["a", "b", "c", "d"] {
            try await harness.server.post(conversation: conversation, from: "bob", text: text)
            // Each post is stored by its notification or by this sync: a change either way.
            _ = await harness.client.messages(conversation: conversation)
        }
        await harness.client.close()
        let everything = await Self.drain(reader)
        let lagged = await Self.drain(slow)
        #expect(everything.count > 2)
        #expect(lagged == [.missedChanges(count: everything.count - 2)] + everything.suffix(2))
        #expect(!everything.contains { if case .missedChanges = $0 { true } else { false } })
    }

    @Test func cancellingAReaderRemovesItsSubscription() async throws {
        let harness = try await KecalekHarness()
        // The harness's recorder is one subscriber already.
        let before = harness.client.broadcaster.subscriberCount
        let screen = harness.client.changes
        #expect(harness.client.broadcaster.subscriberCount == before + 1)
        let reading = Task { await Self.drain(screen) }
        reading.cancel()
        _ = await reading.value
        #expect(harness.client.broadcaster.subscriberCount == before)
        await harness.client.close()
    }

    @Test func closeFinishesEveryStream() async throws {
        let harness = try await KecalekHarness(seeded: 2)
        let readers = (0..<3).map { _ in
            let changes = harness.client.changes
            return Task { await Self.drain(changes) }
        }
        _ = await harness.client.messages(conversation: conversation)
        await harness.client.close()
        var seen: [[KecalekChange]] = []
        for reader in readers { seen.append(await reader.value) }
        #expect(seen.allSatisfy { $0 == seen[0] })
        #expect(harness.client.broadcaster.subscriberCount == 0)
        #expect(await Self.drain(harness.client.changes).isEmpty)
    }
}
