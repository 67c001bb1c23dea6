import Foundation
import Testing
import TidingsCore
import TidingsKecalek
import TidingsSandbox

/// Reactions and pins announced while a sync runs are newer than its pages: the sync's write must not
/// lose or overwrite them (issue 9). The notifications are delivered in front of the `get_deleted_since`
/// response, so they are applied while the sync still waits: deterministic, no scheduling involved.
@Suite(.timeLimit(.minutes(1))) struct KecalekReactionRaceTests {
    private let conversation = KecalekHarness.conversation

    @Test func reactionsAndPinsOfANewMessageDuringAnIncrementalSyncAreKept() async throws {
        let harness = try await KecalekHarness(seeded: 4)
        _ = await harness.client.messages(conversation: conversation)
        await harness.client.close()
        let posted = try await harness.server.post(conversation: conversation, from: "bob", text: "nová")
        let reaction = KecalekReaction(userID: "carol", emoji: "🎉")
        let injector = NotificationInjectingTransport(before: "get_deleted_since", pick: { $0.max() }) { target in
            [
                .messageReacted(conversationID: KecalekHarness.conversation, messageID: target, change: .add(reaction)),
                .messagePinned(conversationID: KecalekHarness.conversation, messageID: target, pinned: true),
            ]
        }
        injector.base = harness.server.transport(userID: KecalekHarness.me)
        let client = try await harness.relaunch(through: injector)
        let page = await client.messages(conversation: conversation)
        #expect(injector.injectedFor == posted.messageID)
        #expect(page.newMessageIDs == [posted.messageID])
        let stored = try #require(try harness.cache.message(conversationID: conversation, messageID: posted.messageID))
        #expect(stored.reactions == [reaction])
        #expect(stored.pinned)
        #expect(page.messages.last?.reactions == [reaction])
        await client.close()
    }

    /// The `new_message` of a message a sync is fetching arrives during that sync and is buffered; stored
    /// after the sync, it must not replace the fetched copy, whose reactions and pin are newer (found by the
    /// model test).
    @Test func aBufferedNewMessageDoesNotUndoTheReactionsAndPinItsSyncFetched() async throws {
        let harness = try await KecalekHarness(seeded: 4)
        _ = await harness.client.messages(conversation: conversation)
        await harness.client.close()
        let posted = try await harness.server.post(conversation: conversation, from: "bob", text: "nová")
        await harness.server.react(conversation: conversation, messageID: posted.messageID, userID: "carol", emoji: "🎉")
        await harness.server.pin(conversation: conversation, messageID: posted.messageID, pinned: true)
        var announced = posted
        announced.reactions = []
        announced.pinned = false
        let injector = NotificationInjectingTransport(before: "get_messages") { [announced] _ in
            [.newMessage(announced)]
        }
        injector.base = harness.server.transport(userID: KecalekHarness.me)
        let client = try await harness.relaunch(through: injector)
        let page = await client.messages(conversation: conversation)
        #expect(injector.injectedFor != nil)
        #expect(page.newMessageIDs == [posted.messageID])
        let stored = try #require(try harness.cache.message(conversationID: conversation, messageID: posted.messageID))
        #expect(stored.reactions == [KecalekReaction(userID: "carol", emoji: "🎉")])
        #expect(stored.pinned)
        await client.close()
    }

    /// A message announced during a full fetch that the fetch's page does not hold (same second as the
    /// page's newest, one-second server) is stored after the sync from its `new_message`; a reaction announced
    /// after it during the sync found no cached message and must be applied to it then (found by the model
    /// test, seed 90000360).
    @Test func aBufferedNewMessageGetsTheReactionsAnnouncedAfterItDuringTheSync() async throws {
        let harness = try await KecalekHarness(reconnects: false)
        await harness.client.close()
        await harness.server.setVariant(.init(resolution: .second, notifications: .none))
        let early = try await harness.server.post(conversation: conversation, from: "bob", text: "early")
        let reaction = KecalekReaction(userID: "carol", emoji: "🎉")
        await harness.server.react(conversation: conversation, messageID: early.messageID, userID: "carol", emoji: "🎉")
        for text in ["a", "b"] { try await harness.server.post(conversation: conversation, from: "bob", text: text) }
        let injector = NotificationInjectingTransport(before: "get_messages") { [early] _ in
            [
                .newMessage(early),
                .messageReacted(
                    conversationID: KecalekHarness.conversation, messageID: early.messageID,
                    change: .replace([reaction])),
            ]
        }
        injector.base = harness.server.transport(userID: KecalekHarness.me)
        let client = try await harness.relaunch(through: injector)
        let page = await client.messages(conversation: conversation, limit: 2)
        await client.close()
        #expect(injector.injectedFor != nil)
        #expect(!page.messages.contains { $0.messageID == early.messageID })
        let stored = try #require(try harness.cache.message(conversationID: conversation, messageID: early.messageID))
        #expect(stored.reactions == [reaction])
    }
}
