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
        let payload: JSONValue = control ? ["_control": .string(text)] : ["text": .string(text)]
        return KecalekMessage(
            messageID: id, conversationID: "c", senderID: "bob", createdAt: KecalekTimestamp(microseconds: micros),
            payload: payload.jsonData(sortedKeys: true), reactions: [.init(userID: "carol", emoji: "👍")],
            pinned: id == "2",
            readBy: [.init(userID: "alice", readAt: nil)])
    }

    @Test func messagesRoundTripWithoutReadByAndTheFileHoldsNoPlaintext() async throws {
        let path = try temporaryPath()
        let key = TidingsCrypto.SymmetricKey.random()
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
        #expect(throws: StoreError.wrongKey) {
            try KecalekSQLiteCache(path: path, key: TidingsCrypto.SymmetricKey.random())
        }
    }

    @Test func aWriteThatFailsHalfwayLeavesNothing() throws {
        let cache = try KecalekSQLiteCache(path: ":memory:", key: TidingsCrypto.SymmetricKey.random())
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
        let cache = try KecalekSQLiteCache(path: ":memory:", key: TidingsCrypto.SymmetricKey.random())
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
        let key = TidingsCrypto.SymmetricKey.random()
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

    // MARK: What the file reveals without the key

    private func fileBytes(_ path: String) throws -> Data {
        var raw = try Data(contentsOf: URL(fileURLWithPath: path))
        if let wal = try? Data(contentsOf: URL(fileURLWithPath: path + "-wal")) { raw += wal }
        return raw
    }

    @Test func theFileHoldsNoIDSenderOrControlFlagOnlyTagsInstantsAndSealedBodies() throws {
        let path = try temporaryPath()
        let key = TidingsCrypto.SymmetricKey.random()
        let secrets = ["conv-Zq9Secret", "msg-Xy7Secret", "sender-Mallory", "_control"]
        do {
            let cache = try KecalekSQLiteCache(path: path, key: key)
            try cache.write { writer in
                for index in 0..<40 {
                    let payload: JSONValue =
                        index == 39 ? ["_control": .string("rotate")] : ["text": .string("x\(index)")]
                    _ = try writer.upsert(
                        KecalekMessage(
                            messageID: "msg-Xy7Secret-\(index)", conversationID: "conv-Zq9Secret",
                            senderID: "sender-Mallory", createdAt: KecalekTimestamp(microseconds: Int64(index) * 1_000),
                            payload: payload.jsonData(sortedKeys: true)))
                }
                // The sync point and the pending mark_read set are keyed by tags and sealed too.
                try writer.setSyncState(
                    KecalekSyncState(point: KecalekTimestamp(microseconds: 39_000), largestPage: 40),
                    conversationID: "conv-Zq9Secret")
                try writer.addPendingReads(["msg-Xy7Secret-7"], conversationID: "conv-Zq9Secret")
            }
            #expect(try cache.pendingReads(conversationID: "conv-Zq9Secret") == ["msg-Xy7Secret-7"])
            #expect(try cache.syncState(conversationID: "conv-Zq9Secret")?.largestPage == 40)
            let raw = try fileBytes(path)
            for secret in secrets { #expect(raw.range(of: Data(secret.utf8)) == nil, "\(secret) is in the file") }
            cache.database.close()
        }
        // Opened without the key, the table has exactly the documented columns, and none holds text.
        let bare = try SQLiteDatabase(path: path, schema: KecalekSQLiteCache.schema)
        #expect(
            try bare.read { try $0.columnNames(of: "kecalek_messages") } == [
                "conversation_tag", "message_tag", "created_us", "body",
            ])
        let shapes = try bare.read { db in
            try db.fetchAll(
                "SELECT typeof(conversation_tag), length(conversation_tag), typeof(message_tag), length(message_tag), "
                    + "typeof(created_us), length(body) % 64 FROM kecalek_messages"
            ) { row in
                [
                    try row[0] as String, String(try row[1] as Int), try row[2] as String, String(try row[3] as Int),
                    try row[4] as String, String(try row[5] as Int),
                ]
            }
        }
        #expect(shapes.count == 40)
        // Sealed bodies: format byte, row tag, nonce and GCM tag (37 bytes) around a multiple of 64.
        #expect(Set(shapes) == [["blob", "16", "blob", "16", "integer", String(37 % 64)]])
        #expect(
            try bare.read { try $0.fetchOne(Int.self, "SELECT count(DISTINCT conversation_tag) FROM kecalek_messages") }
                == 1)
    }

    @Test func theNewestPageSkipsControlRowsAndOrdersEqualInstantsLikeTheMemoryCache() throws {
        let sqlite = try KecalekSQLiteCache(path: ":memory:", key: TidingsCrypto.SymmetricKey.random())
        let memory = KecalekMemoryCache()
        // Three messages share the newest visible instant, and control messages sit among them and above.
        let messages = [
            message("d", at: 1_000), message("b", at: 5_000), message("c", at: 5_000), message("a", at: 5_000),
            message("k", at: 5_000, control: true), message("z", at: 9_000, control: true), message("e", at: 2_000),
        ]
        for cache in [sqlite, memory] as [any KecalekMessageCache] {
            try cache.write { writer in for message in messages { _ = try writer.upsert(message) } }
        }
        for limit in [0, 1, 2, 3, 4, 10] {
            let fromSQLite = try sqlite.newestMessages(conversationID: "c", limit: limit).map(\.messageID)
            #expect(fromSQLite == (try memory.newestMessages(conversationID: "c", limit: limit).map(\.messageID)))
        }
        #expect(try sqlite.newestMessages(conversationID: "c", limit: 2).map(\.messageID) == ["b", "c"])
        #expect(try sqlite.newestTimestamp(conversationID: "c")?.microseconds == 9_000)
        #expect(try sqlite.conversations() == (try memory.conversations()))
        #expect(try sqlite.newestMessages(conversationID: "other", limit: 5).isEmpty)
    }

    @Test func aVersion1CacheIsRebuiltAndItsPlaintextIDsLeaveTheFile() throws {
        let path = try temporaryPath()
        do {
            let version1 = SQLiteSchema(
                tables: [.disposable("kecalek_messages")], migrations: [KecalekSQLiteCache.schema.migrations[0]])
            let old = try SQLiteDatabase(path: path, schema: version1)
            try old.write { db in
                for index in 0..<200 {
                    try db.execute(
                        "INSERT INTO kecalek_messages VALUES (?, ?, ?, ?, ?, ?)",
                        [
                            "plain-conversation-id", "plain-message-\(index)", index, "2026-02-15T22:00:00", 0,
                            [UInt8(1)],
                        ])
                }
            }
            old.close()
        }
        #expect(try fileBytes(path).range(of: Data("plain-conversation-id".utf8)) != nil)
        let cache = try KecalekSQLiteCache(path: path, key: TidingsCrypto.SymmetricKey.random())
        #expect(cache.database.openReport.migratedFrom == 1)
        #expect(try cache.messageCount(conversationID: "plain-conversation-id") == 0)
        cache.database.close()
        let raw = try fileBytes(path)
        #expect(raw.range(of: Data("plain-conversation-id".utf8)) == nil)
        #expect(raw.range(of: Data("plain-message-".utf8)) == nil)
    }

    @Test func readOnlyOpensReadButCreateWriteAndRecoverNothing() throws {
        let path = try temporaryPath()
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let key = TidingsCrypto.SymmetricKey.random()
        do {
            let cache = try KecalekSQLiteCache(path: path, key: key)
            try cache.write { writer in _ = try writer.upsert(message("1", at: 1_000)) }
            cache.database.close()
        }
        try FileManager.default.removeItem(atPath: path + ".lock")
        let before = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        #expect(before == ["cache.sqlite"])
        do {
            let reader = try KecalekSQLiteCache(path: path, key: key, readOnly: true)
            #expect(try reader.newestMessages(conversationID: "c", limit: 5).map(\.messageID) == ["1"])
            #expect(throws: StoreError.readOnly) {
                try reader.write { writer in _ = try writer.upsert(message("2", at: 2)) }
            }
            reader.database.close()
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == before)
        // A missing file is not created; a damaged one is reported and stays where and as it is.
        #expect(throws: StoreError.cannotOpen) { try KecalekSQLiteCache(path: path + "-x", key: key, readOnly: true) }
        let garbage = Data(repeating: 0x42, count: 4096)
        try garbage.write(to: URL(fileURLWithPath: path))
        #expect(throws: StoreError.notADatabase) { try KecalekSQLiteCache(path: path, key: key, readOnly: true) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == garbage)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == before)
    }

    @Test func aDeletedMessageLeavesNoTagOrSealedBodyInTheFile() throws {
        let path = try temporaryPath()
        let key = TidingsCrypto.SymmetricKey.random()
        do {
            let cache = try KecalekSQLiteCache(path: path, key: key)
            try cache.write { writer in
                for index in 0..<30 { _ = try writer.upsert(message("\(index)", at: Int64(index))) }
            }
            cache.database.close()
        }
        let bare = try SQLiteDatabase(path: path, schema: KecalekSQLiteCache.schema)
        let rows = try bare.read { db in
            try db.fetchAll("SELECT message_tag, body FROM kecalek_messages ORDER BY created_us") { row in
                (tag: try row[0] as [UInt8], body: try row[1] as [UInt8])
            }
        }
        bare.close()
        try #require(rows.count == 30)
        let doomed = rows[7]
        do {
            let cache = try KecalekSQLiteCache(path: path, key: key)
            #expect(try cache.write { try $0.delete(conversationID: "c", messageIDs: ["7"]) } == ["7"])
            cache.database.close()
        }
        let raw = try fileBytes(path)
        #expect(raw.range(of: Data(doomed.body)) == nil, "the deleted row's sealed body is still in the file")
        #expect(raw.range(of: Data(doomed.tag)) == nil, "the deleted row's tag is still in the file")
        #expect(raw.range(of: Data(rows[8].body)) != nil)
    }
}
