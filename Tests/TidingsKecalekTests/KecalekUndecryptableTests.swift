import Foundation
import Testing
import TidingsCore
import TidingsKecalek
import TidingsSandbox

/// A message that does not decrypt is treated alike by full and incremental syncs: reported, not
/// stored, not marked read (issue 9).
@Suite(.timeLimit(.minutes(1))) struct KecalekUndecryptableTests {
    let conversation = KecalekHarness.conversation

    private func insertTampered(_ harness: KecalekHarness, id: String) async throws {
        var tampered = try #require(await harness.server.message(conversation: conversation, messageID: "msg-000001"))
        tampered.messageID = id
        tampered.encryptedPayload[tampered.encryptedPayload.count - 1] ^= 0x01
        await harness.server.insertRaw(conversation: conversation, messageID: id, raw: tampered.json)
    }

    @Test func fullAndIncrementalSyncsNeitherStoreNorMarkReadAMessageThatDoesNotDecrypt() async throws {
        let harness = try await KecalekHarness(seeded: 1, reconnects: false)
        try await insertTampered(harness, id: "msg-evil1")
        let full = await harness.client.messages(conversation: conversation)
        #expect(full.source.isFull)
        #expect(full.issues.map(\.messageID) == ["msg-evil1"])
        #expect(full.markedRead == ["msg-000001"])
        await harness.client.close()

        try await insertTampered(harness, id: "msg-evil2")
        let after = try await harness.server.post(conversation: conversation, from: "bob", text: "after")
        let relaunched = try await harness.relaunch()
        let incremental = await relaunched.messages(conversation: conversation)
        #expect(incremental.source.isIncremental)
        // msg-evil1 carries the timestamp of the sync point (it copies msg-000001's), so it is asked for
        // again and reported again; what matters is that neither is stored nor marked read.
        #expect(incremental.issues.map(\.messageID).contains("msg-evil2"))
        #expect(incremental.markedRead == [after.messageID])
        for id in ["msg-evil1", "msg-evil2"] {
            #expect(try harness.cache.message(conversationID: conversation, messageID: id) == nil)
        }
        await relaunched.close()
    }
}
