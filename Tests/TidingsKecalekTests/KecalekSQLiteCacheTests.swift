import Foundation
import Testing
import TidingsCore
import TidingsKecalek
import TidingsSandbox

/// The SQLite cache: encrypted at rest, one transaction per write, survives a relaunch.
@Suite(.timeLimit(.minutes(1))) struct KecalekSQLiteCacheTests {
    private func temporaryPath() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kecalek-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent("cache.sqlite").path
    }

    private func message(_ id: String, at micros: Int64, text: String = "tajné", control: Bool = false)
        -> KecalekMessage
    {
        let payload: KecalekJSON = control ? ["_control": .string(text)] : ["text": .string(text)]
        return KecalekMessage(
            messageID: id, conversationID: "c", senderID: "bob", createdAt: KecalekTimestamp(microseconds: micros),
            payload: payload.encoded(), reactions: [.init(userID: "carol", emoji: "👍")], pinned: id == "2",
            readBy: [.init(userID: "alice", readAt: nil)])
    }

    @Test func messagesRoundTripWithoutReadByAndTheFileHoldsNoPlaintext() async throws {
        let path = try temporaryPath()
        let key = SymmetricKey.random()
        do {
            let cache = try KecalekSQLiteCache(path: path, key: key)
            let inserted = try cache.write { writer in
                [
                    try writer.upsert(message("1", at: 1_000, text: "Přísně tajná zpráva")),
                    try writer.upsert(message("2", at: 2_000)),
                    try writer.upsert(message("3", at: 3_000, control: true)),
                    try writer.upsert(message("2", at: 2_000)),
                ]
            }
            #expect(inserted == [true, true, true, false])
            let newest = try cache.newestMessages(conversationID: "c", limit: 10)
            try #require(newest.map(\.messageID) == ["1", "2"])
            #expect(newest[0].text == "Přísně tajná zpráva")
            #expect(newest[1].pinned)
            #expect(newest[0].reactions == [.init(userID: "carol", emoji: "👍")])
            #expect(newest.allSatisfy { $0.readBy.isEmpty })
            #expect(try cache.newestTimestamp(conversationID: "c")?.microseconds == 3_000)
            #expect(try cache.messageCount(conversationID: "c") == 3)
            #expect(
                try cache.conversations() == [
                    .init(conversationID: "c", messageCount: 3, newest: KecalekTimestamp(microseconds: 3_000))
                ])
        }
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        var raw = try Data(contentsOf: URL(fileURLWithPath: path))
        if let wal = try? Data(contentsOf: URL(fileURLWithPath: path + "-wal")) { raw += wal }
        #expect(raw.range(of: Data("Přísně".utf8)) == nil)
        #expect(raw.range(of: Data("carol".utf8)) == nil)
        // Reopened with the key: everything is there; with another key: refused.
        let reopened = try KecalekSQLiteCache(path: path, key: key)
        #expect(try reopened.newestMessages(conversationID: "c", limit: 1).first?.text == "tajné")
        #expect(throws: StoreError.wrongKey) { try KecalekSQLiteCache(path: path, key: SymmetricKey.random()) }
    }

    @Test func aWriteThatFailsHalfwayLeavesNothing() throws {
        let cache = try KecalekSQLiteCache(path: ":memory:", key: SymmetricKey.random())
        try cache.write { writer in _ = try writer.upsert(message("1", at: 1)) }
        #expect(throws: KecalekError.self) {
            try cache.write { writer in
                _ = try writer.upsert(message("2", at: 2))
                _ = try writer.delete(conversationID: "c", messageIDs: ["1"])
                throw KecalekError.cache
            }
        }
        #expect(try cache.newestMessages(conversationID: "c", limit: 10).map(\.messageID) == ["1"])
    }

    @Test func reactionsAndPinsUpdateInPlaceAndDeletesReportWhatWasThere() throws {
        let cache = try KecalekSQLiteCache(path: ":memory:", key: SymmetricKey.random())
        let outcome = try cache.write { writer in
            _ = try writer.upsert(message("1", at: 1))
            let reacted = try writer.setReactions([], conversationID: "c", messageID: "1")
            let pinned = try writer.setPinned(true, conversationID: "c", messageID: "1")
            let pinnedMissing = try writer.setPinned(true, conversationID: "c", messageID: "nope")
            let stored = try writer.message(conversationID: "c", messageID: "1")
            let removed = try writer.delete(conversationID: "c", messageIDs: ["nope", "1"])
            return (reacted, pinned, pinnedMissing, stored, removed)
        }
        #expect(outcome.0 && outcome.1 && !outcome.2)
        #expect(outcome.3?.pinned == true && outcome.3?.reactions == [])
        #expect(outcome.4 == ["1"])
        #expect(try cache.messageCount(conversationID: "c") == 0)
    }

    @Test func theTableRowsHoldWithTheSQLiteCacheAndOfflineAfterARelaunch() async throws {
        let path = try temporaryPath()
        let key = SymmetricKey.random()
        let harness = try await KecalekHarness(seeded: 60, cache: try KecalekSQLiteCache(path: path, key: key))
        let first = await harness.client.messages(conversation: KecalekHarness.conversation)
        #expect(first.source.isFull)
        await harness.client.close()
        await harness.server.advanceTime(by: .seconds(300))
        let new = try await harness.server.post(conversation: KecalekHarness.conversation, from: "bob", text: "nové")
        _ = await harness.takeLog()

        // Relaunch over the same file, while the server is unreachable: the cache answers.
        let offline = KecalekClient(
            configuration: .init(userID: KecalekHarness.me), transport: RefusableTransport(),
            cache: try KecalekSQLiteCache(path: path, key: key), decryptor: harness.server.cipher, clock: harness.clock)
        let page = await offline.messages(conversation: KecalekHarness.conversation)
        #expect(page.source.cacheError == .notConnected)
        #expect(page.messages.map(\.messageID) == first.messages.map(\.messageID))

        // Relaunch online: only the new message comes.
        let online = KecalekClient(
            configuration: .init(userID: KecalekHarness.me),
            transport: harness.server.transport(userID: KecalekHarness.me),
            cache: try KecalekSQLiteCache(path: path, key: key), decryptor: harness.server.cipher, clock: harness.clock)
        try await online.connect()
        let reopened = await online.messages(conversation: KecalekHarness.conversation)
        #expect(reopened.source.isIncremental)
        #expect(reopened.newMessageIDs == [new.messageID])
        #expect(reopened.traffic.requests.first?.itemCount == 2)
        #expect(await harness.takeLog().map(\.type) == ["get_messages", "get_deleted_since", "mark_read"])
        await online.close()
    }
}
