import Foundation
import Testing
import TidingsCore
import TidingsKecalek
import TidingsSandbox

/// Notifications and metadata: reactions and pins cached and updated in place, `read_by` in memory only,
/// deletions at once, unknown types ignored with a log line.
@Suite(.timeLimit(.minutes(1))) struct KecalekClientNotificationTests {
    private let conversation = KecalekHarness.conversation

    @Test func reactionsAndPinsAreUpdatedInPlaceInTheCache() async throws {
        let harness = try await KecalekHarness(seeded: 4)
        let page = await harness.client.messages(conversation: conversation)
        let target = try #require(page.messages.first?.messageID)
        await harness.server.react(conversation: conversation, messageID: target, userID: "bob", emoji: "👍")
        await harness.server.react(conversation: conversation, messageID: target, userID: "carol", emoji: "🎉")
        await harness.server.pin(conversation: conversation, messageID: target, pinned: true)
        #expect(
            try await eventually {
                try harness.cache.message(conversationID: conversation, messageID: target)?.pinned == true
            })
        let stored = try #require(try harness.cache.message(conversationID: conversation, messageID: target))
        #expect(stored.reactions == [.init(userID: "bob", emoji: "👍"), .init(userID: "carol", emoji: "🎉")])
        await harness.server.pin(conversation: conversation, messageID: target, pinned: false)
        #expect(
            try await eventually {
                try harness.cache.message(conversationID: conversation, messageID: target)?.pinned == false
            })
        #expect(
            await eventually {
                harness.recorder.contains {
                    $0 == .pinChanged(conversationID: conversation, messageID: target, pinned: true)
                }
            })
        // No request went out for any of it.
        #expect(await harness.takeLog().map(\.type) == ["get_messages", "mark_read"])
    }

    @Test func addAndRemoveReactionNotificationsEditTheCachedList() async throws {
        let harness = try await KecalekHarness(seeded: 2)
        let page = await harness.client.messages(conversation: conversation)
        let target = try #require(page.messages.last?.messageID)
        let add = Data(
            #"{"type":"message_reacted","data":{"conversation_id":"general","message_id":"\#(target)","user_id":7,"emoji":"❤️"}}"#
                .utf8)
        let remove = Data(
            #"{"type":"message_reacted","conversation_id":"general","message_id":"\#(target)","user_id":"7","emoji":"❤️","action":"remove"}"#
                .utf8)
        await harness.server.sendRaw(add, to: KecalekHarness.me)
        #expect(
            try await eventually {
                try harness.cache.message(conversationID: conversation, messageID: target)?.reactions == [
                    .init(userID: "7", emoji: "❤️")
                ]
            })
        await harness.server.sendRaw(remove, to: KecalekHarness.me)
        #expect(
            try await eventually {
                try harness.cache.message(conversationID: conversation, messageID: target)?.reactions == []
            })
    }

    @Test func readByIsKeptInMemoryOnlyAndFollowsMessagesRead() async throws {
        let harness = try await KecalekHarness(seeded: 4)
        let page = await harness.client.messages(conversation: conversation)
        let mine = try #require(page.messages.first { $0.senderID == KecalekHarness.me })
        let theirs = try #require(page.messages.first { $0.senderID == KecalekHarness.other })
        // The client marked bob's message read and remembers it.
        #expect(page.markedRead.contains(theirs.messageID))
        #expect(page.messages.first { $0.messageID == theirs.messageID }?.readBy.map(\.userID) == [KecalekHarness.me])
        // Bob reads alice's message: a messages_read notification arrives.
        let bob = KecalekClient(
            configuration: .init(userID: "bob"), transport: harness.server.transport(userID: "bob"),
            cache: KecalekMemoryCache(), decryptor: harness.server.cipher, clock: harness.clock)
        try await bob.connect()
        _ = await bob.messages(conversation: conversation)
        #expect(
            await eventually {
                await harness.client.readReceipts(conversationID: conversation, messageID: mine.messageID).map(\.userID)
                    == ["bob"]
            })
        let again = await harness.client.messages(conversation: conversation)
        #expect(again.messages.first { $0.messageID == mine.messageID }?.readBy.map(\.userID) == ["bob"])
        // The cache never stores read_by.
        #expect(try harness.cache.message(conversationID: conversation, messageID: mine.messageID)?.readBy == [])
        #expect(try harness.cache.newestMessages(conversationID: conversation, limit: 10).allSatisfy(\.readBy.isEmpty))
        await bob.close()
    }

    @Test func aDeletionNotificationRemovesTheMessageAtOnce() async throws {
        let harness = try await KecalekHarness(seeded: 6)
        let page = await harness.client.messages(conversation: conversation)
        try #require(page.messages.count == 6)
        let doomed = page.messages[2].messageID
        await harness.server.delete(conversation: conversation, messageID: doomed)
        #expect(
            try await eventually { try harness.cache.message(conversationID: conversation, messageID: doomed) == nil })
        #expect(
            await eventually {
                harness.recorder.contains { $0 == .messagesDeleted(conversationID: conversation, messageIDs: [doomed]) }
            })
        #expect(try harness.cache.messageCount(conversationID: conversation) == 5)
    }

    @Test func newMessageNotificationsAreStoredWhenTheCacheIsCurrent() async throws {
        let harness = try await KecalekHarness(seeded: 3)
        _ = await harness.client.messages(conversation: conversation)
        _ = await harness.takeLog()
        let posted = try await harness.server.post(conversation: conversation, from: "bob", text: "živě")
        #expect(
            try await eventually {
                try harness.cache.message(conversationID: conversation, messageID: posted.messageID) != nil
            })
        #expect(try harness.cache.message(conversationID: conversation, messageID: posted.messageID)?.text == "živě")
        // Stored from the notification: no request was needed.
        #expect(await harness.takeLog().isEmpty)
        // A conversation that was never opened is left for its first open.
        _ = try await harness.server.post(conversation: "random", from: "bob", text: "jinde")
        // Notifications are applied in order: once a later one is stored, the one for "random" was handled.
        let barrier = try await harness.server.post(conversation: conversation, from: "bob", text: "potom")
        #expect(
            await eventually {
                harness.recorder.contains {
                    $0 == .messagesStored(conversationID: conversation, messageIDs: [barrier.messageID])
                }
            })
        #expect(try harness.cache.messageCount(conversationID: "random") == 0)
    }

    @Test func unknownNotificationsAreIgnoredWithALogLine() async throws {
        let harness = try await KecalekHarness(seeded: 2)
        _ = await harness.client.messages(conversation: conversation)
        await harness.server.sendRaw(
            Data(#"{"type":"typing_started","data":{"user_id":"bob"}}"#.utf8), to: KecalekHarness.me)
        await harness.server.sendRaw(Data("not json at all".utf8), to: KecalekHarness.me)
        await harness.server.sendRaw(Data(#"{"type":"message_pinned","data":{}}"#.utf8), to: KecalekHarness.me)
        #expect(await eventually { harness.logs.messages.contains { $0.contains("typing_started") } })
        #expect(await eventually { harness.logs.messages.filter { $0.contains("malformed frame") }.count == 2 })
        // The connection is still good.
        let page = await harness.client.messages(conversation: conversation)
        #expect(page.source.isIncremental)
        #expect(await harness.client.connectionState == .connected)
    }
}
