import Foundation
import Testing
import TidingsCore
import TidingsKecalek
import TidingsSandbox

/// One damaged cache row costs that message, fetched again, never the whole conversation (issue 9).
@Suite(.timeLimit(.minutes(1))) struct KecalekDamagedRowTests {
    let conversation = KecalekHarness.conversation

    @Test func aDamagedRowIsRemovedAndFetchedAgain() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try KecalekSQLiteCache(
            path: directory.appendingPathComponent("cache.sqlite").path, key: TidingsCrypto.SymmetricKey.random())
        let harness = try await KecalekHarness(seeded: 10, reconnects: false, cache: cache)
        let first = await harness.client.messages(conversation: conversation, limit: 10)
        try #require(first.messages.count == 10)
        let victim = first.messages[3]
        // The file keeps message IDs only inside the sealed body: the row is found by its clear instant.
        let changed = try await cache.database.write { db in
            try db.execute(
                "UPDATE kecalek_messages SET body = ? WHERE created_us = ?",
                [Data([1, 2, 3, 4]), victim.createdAt.microseconds])
            return db.changes
        }
        try #require(changed == 1)
        #expect(try cache.damagedRows(conversationID: conversation).map(\.createdAt) == [victim.createdAt])

        let second = await harness.client.messages(conversation: conversation, limit: 10)
        #expect(second.source.isIncremental)
        #expect(second.messages.map(\.messageID) == first.messages.map(\.messageID))
        #expect(second.newMessageIDs == [victim.messageID])
        #expect(try cache.damagedRows(conversationID: conversation).isEmpty)
        await harness.client.close()
    }
}
