import Foundation
import Testing
import TidingsCore
import TidingsKecalek
import TidingsSandbox

/// Notifications and metadata: reactions and pins cached and updated in place, `read_by` in memory only,
/// deletions at once, unknown types ignored with a log line.
@Suite struct KecalekClientNotificationTests {
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
        _ = await eventually { harness.recorder.all.count > 100 }
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

/// Message content: control payloads, undecryptable and malformed messages, `mark_read` filtering.
@Suite struct KecalekClientContentTests {
    private let conversation = KecalekHarness.conversation

    @Test func controlPayloadsAreCachedButKeptOutOfLists() async throws {
        let harness = try await KecalekHarness(seeded: 3)
        try await harness.server.post(conversation: conversation, from: "bob", text: "key-rotation", control: true)
        let page = await harness.client.messages(conversation: conversation)
        #expect(page.messages.count == 3)
        #expect(page.messages.allSatisfy { !$0.isControl })
        #expect(try harness.cache.messageCount(conversationID: conversation) == 4)
        // The control message still sets after_ts, so it is not fetched again.
        _ = await harness.takeLog()
        _ = await harness.client.messages(conversation: conversation)
        #expect(await harness.takeLog().first?.since == "2026-02-15T22:00:00.004000")
    }

    @Test func aTamperedBlobIsReportedForThatMessageAndTheRestOfThePageApplies() async throws {
        let harness = try await KecalekHarness(seeded: 3)
        var tampered = try #require(await harness.server.message(conversation: conversation, messageID: "msg-000002"))
        tampered.messageID = "msg-evil"
        tampered.encryptedPayload[tampered.encryptedPayload.count - 1] ^= 0x01
        await harness.server.insertRaw(conversation: conversation, messageID: "msg-evil", raw: tampered.json)
        let foreign = try (KecalekAESGCMCipher(keys: ["general": SymmetricKey.random()])).seal(
            Data(#"{"text":"wrong key"}"#.utf8), conversationID: conversation)
        var wrongKey = tampered
        wrongKey.messageID = "msg-wrongkey"
        wrongKey.encryptedPayload = foreign
        await harness.server.insertRaw(conversation: conversation, messageID: "msg-wrongkey", raw: wrongKey.json)
        try await harness.server.post(conversation: conversation, from: "bob", text: "after")

        let page = await harness.client.messages(conversation: conversation)
        #expect(page.source.isFull)
        #expect(page.messages.map(\.messageID) == ["msg-000001", "msg-000002", "msg-000003", "msg-000004"])
        #expect(page.issues.map(\.messageID) == ["msg-evil", "msg-wrongkey"])
        #expect(page.issues.allSatisfy { $0.error == .decryption })
        #expect(
            await eventually {
                harness.recorder.contains {
                    if case .issue(let issue) = $0 { issue.messageID == "msg-evil" } else { false }
                }
            })
    }

    @Test func aMalformedMessageIsSkippedWithAnErrorRecord() async throws {
        let harness = try await KecalekHarness(seeded: 2)
        _ = await harness.client.messages(conversation: conversation)
        var good = try #require(await harness.server.message(conversation: conversation, messageID: "msg-000001")).json
        if case .object(var members) = good {
            members["sender_id"] = nil
            members["message_id"] = "msg-nosender"
            good = .object(members)
        }
        await harness.server.insertRaw(conversation: conversation, messageID: "msg-nosender", raw: good)
        await harness.server.insertRaw(conversation: conversation, messageID: "x", raw: "just a string")
        await harness.server.insertRaw(
            conversation: conversation, messageID: "msg-badtime",
            raw: [
                "message_id": "msg-badtime", "sender_id": "bob", "created_at": "yesterday", "encrypted_payload": "AAAA",
            ])
        let posted = try await harness.server.post(conversation: conversation, from: "bob", text: "still here")

        let page = await harness.client.messages(conversation: conversation)
        #expect(page.source.isIncremental)
        #expect(page.newMessageIDs == [posted.messageID])
        #expect(page.issues.count == 3)
        #expect(page.issues.allSatisfy { $0.error == .malformedMessage })
        #expect(Set(page.issues.compactMap(\.messageID)) == ["msg-nosender", "msg-badtime"])
        #expect(page.messages.last?.text == "still here")
    }

    @Test func markReadCarriesOnlyOthersUnreadMessagesAndIsNeverEmpty() async throws {
        let me = "alice"
        func wire(_ id: String, from sender: String, readBy: [String]) -> KecalekWireMessage {
            KecalekWireMessage(
                messageID: id, conversationID: "c", senderID: sender,
                createdAt: KecalekTimestamp(microseconds: 0), encryptedPayload: Data(),
                readBy: readBy.map { KecalekReadReceipt(userID: $0, readAt: nil) })
        }
        let page = [
            wire("1", from: "bob", readBy: []), wire("2", from: me, readBy: []), wire("3", from: "bob", readBy: [me]),
            wire("4", from: "carol", readBy: ["bob"]),
        ]
        #expect(KecalekClient.unreadMessageIDs(page, me: me) == ["1", "4"])
        #expect(KecalekClient.unreadMessageIDs([wire("2", from: me, readBy: [])], me: me).isEmpty)

        // Against the server: a conversation of only my own messages sends no mark_read at all.
        let harness = try await KecalekHarness()
        try await harness.server.seed(conversation: "random", from: [me], count: 5)
        let own = await harness.client.messages(conversation: "random")
        #expect(own.markedRead.isEmpty)
        #expect(await harness.takeLog().map(\.type) == ["get_messages"])
        // Messages already read by me (from another device) are not marked again.
        try await harness.server.seed(conversation: "general", from: ["bob"], count: 3)
        let other = KecalekClient(
            configuration: .init(userID: me), transport: harness.server.transport(userID: me),
            cache: KecalekMemoryCache(), decryptor: harness.server.cipher, clock: harness.clock)
        try await other.connect()
        #expect(await other.messages(conversation: "general").markedRead.count == 3)
        await other.close()
        _ = await harness.takeLog()
        let second = await harness.client.messages(conversation: "general")
        #expect(second.markedRead.isEmpty)
        #expect(!(await harness.takeLog().map(\.type).contains("mark_read")))
    }

    @Test func zonedAndSecondTimestampsFromTheServerSyncTheSame() async throws {
        let harness = try await KecalekHarness()
        await harness.server.setTimestampStyle(.millisecondsWithOffset)
        try await harness.server.seed(conversation: conversation, from: ["bob"], count: 3)
        let first = await harness.client.messages(conversation: conversation)
        #expect(first.messages.first?.createdAt.text.hasSuffix("+01:00") == true)
        await harness.server.advanceTime(by: .seconds(2))
        let posted = try await harness.server.post(conversation: conversation, from: "bob", text: "z")
        _ = await harness.takeLog()
        let second = await harness.client.messages(conversation: conversation)
        #expect(second.newMessageIDs.contains(posted.messageID) || second.messages.last?.messageID == posted.messageID)
        #expect(second.messages.count == 4)
        #expect(await harness.takeLog().first?.since == first.messages.last?.createdAt.text)
    }
}
