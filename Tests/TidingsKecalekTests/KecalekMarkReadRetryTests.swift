import Foundation
import Testing
import TidingsCore
import TidingsKecalek
import TidingsSandbox

/// A `mark_read` the server did not accept is sent again until it is (issue 9).
@Suite(.timeLimit(.minutes(1))) struct KecalekMarkReadRetryTests {
    let conversation = KecalekHarness.conversation

    @Test func aFailedMarkReadIsRetriedByTheNextSyncEvenAfterARelaunch() async throws {
        let harness = try await KecalekHarness(seeded: 6, reconnects: false)
        await harness.server.inject(.errorStatus("internal_error"), on: "mark_read")
        let first = await harness.client.messages(conversation: conversation)
        #expect(first.markedRead.isEmpty)
        let unread = ["msg-000001", "msg-000003", "msg-000005"]
        #expect(try harness.cache.pendingReads(conversationID: conversation) == unread)
        await harness.client.close()
        _ = await harness.takeLog()

        // Nothing new on the server: the retry alone sends `mark_read`.
        let relaunched = try await harness.relaunch()
        let second = await relaunched.messages(conversation: conversation)
        #expect(second.markedRead == unread)
        let log = await harness.takeLog()
        #expect(
            log.filter { $0.type == "mark_read" }.map { $0.request.parameters["message_ids"] } == [
                .array(unread.map(JSONValue.string))
            ])
        #expect(try harness.cache.pendingReads(conversationID: conversation).isEmpty)
        for id in unread {
            #expect(
                await harness.server.message(conversation: conversation, messageID: id)?.readBy.map(\.userID) == [
                    "alice"
                ])
        }

        // Accepted: no further `mark_read`.
        _ = await relaunched.messages(conversation: conversation)
        #expect(await harness.takeLog().filter { $0.type == "mark_read" }.isEmpty)
        #expect(await harness.server.redundantReadMarks.isEmpty)
        await relaunched.close()
    }

    @Test func aPendingReadOfADeletedMessageIsDroppedNotSent() async throws {
        let harness = try await KecalekHarness(seeded: 2, reconnects: false)
        await harness.server.inject(.dropConnection, on: "mark_read")
        _ = await harness.client.messages(conversation: conversation)
        #expect(try harness.cache.pendingReads(conversationID: conversation) == ["msg-000001"])
        await harness.server.delete(conversation: conversation, messageID: "msg-000001")
        let relaunched = try await harness.relaunch()
        _ = await harness.takeLog()
        let page = await relaunched.messages(conversation: conversation)
        #expect(page.deletedMessageIDs == ["msg-000001"])
        #expect(await harness.takeLog().filter { $0.type == "mark_read" }.isEmpty)
        #expect(try harness.cache.pendingReads(conversationID: conversation).isEmpty)
        await relaunched.close()
    }

    @Test func pendingReadsSurviveReopeningTheSQLiteCache() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("cache.sqlite").path
        let key = TidingsCrypto.SymmetricKey.random()
        do {
            let cache = try KecalekSQLiteCache(path: path, key: key)
            try cache.write { writer in
                try writer.addPendingReads(["m2", "m1"], conversationID: "c")
                try writer.addPendingReads(["m1", "m3"], conversationID: "c")
            }
        }
        let reopened = try KecalekSQLiteCache(path: path, key: key)
        // Oldest first, in the order they were queued, as the memory cache keeps them.
        #expect(try reopened.pendingReads(conversationID: "c") == ["m2", "m1", "m3"])
        let memory = KecalekMemoryCache()
        try memory.write { writer in
            try writer.addPendingReads(["m2", "m1"], conversationID: "c")
            try writer.addPendingReads(["m1", "m3"], conversationID: "c")
        }
        #expect(try memory.pendingReads(conversationID: "c") == ["m2", "m1", "m3"])
        try reopened.write { try $0.removePendingReads(["m2"], conversationID: "c") }
        #expect(try reopened.pendingReads(conversationID: "c") == ["m1", "m3"])
        #expect(try reopened.pendingReads(conversationID: "other").isEmpty)
    }
}
