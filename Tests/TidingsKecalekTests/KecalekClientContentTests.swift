import Foundation
import Testing
import TidingsCore
import TidingsKecalek
import TidingsSandbox

/// Message content: control payloads, undecryptable and malformed messages, `mark_read` filtering.
@Suite(.timeLimit(.minutes(1))) struct KecalekClientContentTests {
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
        #expect(await harness.takeLog().first?.since == "2026-02-15T22:00:00.003999")
    }

    @Test func aTamperedBlobIsReportedForThatMessageAndTheRestOfThePageApplies() async throws {
        let harness = try await KecalekHarness(seeded: 3)
        var tampered = try #require(await harness.server.message(conversation: conversation, messageID: "msg-000002"))
        tampered.messageID = "msg-evil"
        tampered.encryptedPayload[tampered.encryptedPayload.count - 1] ^= 0x01
        await harness.server.insertRaw(conversation: conversation, messageID: "msg-evil", raw: tampered.json)
        let foreign = try (KecalekAESGCMCipher(keys: ["general": TidingsCrypto.SymmetricKey.random()])).seal(
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
        // Closed before the server changes, so the reopen (not a `new_message` notification) fetches it all.
        await harness.client.close()
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

        let relaunched = try await harness.relaunch()
        let page = await relaunched.messages(conversation: conversation)
        #expect(page.source.isIncremental)
        #expect(page.newMessageIDs == [posted.messageID])
        #expect(page.issues.count == 3)
        #expect(page.issues.allSatisfy { $0.error == .malformedMessage })
        #expect(Set(page.issues.compactMap(\.messageID)) == ["msg-nosender", "msg-badtime"])
        #expect(page.messages.last?.text == "still here")
        await relaunched.close()
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
        let newestCached = try #require(first.messages.last?.createdAt.text)
        // Closed before the post, so the reopen (not a `new_message` notification) brings the message.
        await harness.client.close()
        await harness.server.advanceTime(by: .seconds(2))
        let posted = try await harness.server.post(conversation: conversation, from: "bob", text: "z")
        _ = await harness.takeLog()
        let relaunched = try await harness.relaunch()
        let second = await relaunched.messages(conversation: conversation)
        #expect(second.source.isIncremental)
        #expect(second.newMessageIDs == [posted.messageID])
        #expect(second.messages.count == 4)
        #expect(second.messages.last?.createdAt.text.hasSuffix("+01:00") == true)
        #expect(await harness.takeLog().first?.since == KecalekTimestamp(newestCached)?.oneTickEarlier.text)
        await relaunched.close()
    }

    /// A message stored from its `new_message` notification does not move the sync point: the next sync
    /// still asks for messages and deletions from the last complete sync (issue 9).
    @Test func aZonedNewMessageStoredFromItsNotificationDoesNotMoveTheSyncPoint() async throws {
        let harness = try await KecalekHarness()
        await harness.server.setTimestampStyle(.millisecondsWithOffset)
        try await harness.server.seed(conversation: conversation, from: ["bob"], count: 3)
        let first = await harness.client.messages(conversation: conversation)
        let synced = try #require(first.messages.last?.createdAt)
        await harness.server.advanceTime(by: .seconds(2))
        let posted = try await harness.server.post(conversation: conversation, from: "bob", text: "z")
        // Pinned: the notification is applied before the reopen.
        await harness.recorder.wait {
            if case .messagesStored(_, let ids) = $0 { ids == [posted.messageID] } else { false }
        }
        _ = await harness.takeLog()
        let second = await harness.client.messages(conversation: conversation)
        #expect(second.source.isIncremental)
        #expect(second.newMessageIDs.isEmpty)
        #expect(second.messages.count == 4)
        let log = await harness.takeLog()
        #expect(log.first?.since == synced.oneTickEarlier.text)
        #expect(log.first { $0.type == "get_deleted_since" }?.since == synced.oneTickEarlier.text)
    }
}
