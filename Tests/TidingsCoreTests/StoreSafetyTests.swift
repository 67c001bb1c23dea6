import CSQLite
import Foundation
import Testing
import TidingsCore

@testable import TidingsCore

/// What recovery must not do: replace a file for contention, lose a table to letter case, take damage for a
/// wrong key; and what it must say: references left dangling, orphaned WALs set aside.
@Suite(.timeLimit(.minutes(1))) struct StoreSafetyTests {
    private func fill(_ path: String, schema: SQLiteSchema = TestSchema.schema, rows: Int = 3000) throws {
        try SQLiteDatabase(path: path, schema: schema).write { db in
            try db.execute("INSERT INTO settings VALUES ('theme', 'dark')")
            for index in 0..<rows {
                try db.execute("INSERT INTO outbox(id, payload, created_at) VALUES (?, ?, 0)", [index, [UInt8(7)]])
                try db.execute("INSERT INTO messages(id, body) VALUES (?, 'x')", ["m\(index)"])
            }
        }
    }

    private func configuration(fault: @escaping @Sendable (Int) -> Int32?) -> SQLiteDatabase.Configuration {
        var configuration = SQLiteDatabase.Configuration()
        configuration.quickCheckFault = fault
        return configuration
    }

    // MARK: quick_check

    @Test(arguments: [SQLITE_PROTOCOL, SQLITE_BUSY, SQLITE_NOMEM, SQLITE_INTERRUPT, SQLITE_IOERR])
    func aQuickCheckThatFailsForAnyReasonButDamageThrowsAndLeavesTheFile(code: Int32) throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        try fill(path, rows: 10)
        let error = #expect(throws: StoreError.self) {
            try SQLiteDatabase(path: path, schema: TestSchema.schema, configuration: configuration { _ in code })
        }
        #expect(error?.resultCode == code)
        #expect(try directory.files() == ["store.sqlite", "store.sqlite.lock"])
        let database = try SQLiteDatabase(path: path, schema: TestSchema.schema)
        #expect(database.openReport.recovery == nil)
        #expect(try database.read { try $0.fetchOne(Int.self, "SELECT count(*) FROM messages") } == 10)
    }

    @Test func aQuickCheckThatMeetsSQLITE_PROTOCOLOnceIsRetried() throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        try fill(path, rows: 10)
        let database = try SQLiteDatabase(
            path: path, schema: TestSchema.schema,
            configuration: configuration { attempt in attempt == 1 ? SQLITE_PROTOCOL : nil })
        #expect(database.openReport.recovery == nil)
        #expect(try database.read { try $0.fetchOne(Int.self, "SELECT count(*) FROM messages") } == 10)
    }

    @Test func aQuickCheckThatReportsCorruptionReplacesTheFile() throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        try fill(path, rows: 10)
        // Only the first file's check says so; the fresh store's passes.
        let checks = LockedState(0)
        let database = try SQLiteDatabase(
            path: path, schema: TestSchema.schema,
            configuration: configuration { _ in
                checks.withLock { count in
                    count += 1
                    return count == 1 ? SQLITE_CORRUPT : nil
                }
            })
        #expect(database.openReport.recovery?.keptAllDurableData == true)
    }

    // MARK: Salvage

    @Test func aDurableTableDeclaredInAnotherCaseIsSalvaged() throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        let schema = SQLiteSchema(
            tables: [.durable("Settings"), .durable("OUTBOX"), .disposable("messages")],
            migrations: [TestSchema.version1])
        try fill(path, schema: schema)
        #expect(try TestSchema.damageMessagesIndex(path, schema: schema) > 1)

        let database = try SQLiteDatabase(path: path, schema: schema)
        let recovery = try #require(database.openReport.recovery)
        #expect(recovery.salvaged.map(\.table) == ["Settings", "OUTBOX"])
        #expect(recovery.salvaged.map(\.rowsCopied) == [1, 3000])
        #expect(recovery.keptAllDurableData)
        #expect(recovery.tablesNotKept.isEmpty)
        #expect(try database.read { try $0.fetchOne(Int.self, "SELECT count(*) FROM outbox") } == 3000)
    }

    @Test func aDurableTableMissingFromTheOldFileIsReportedAsNotKept() throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        try fill(path)
        #expect(try TestSchema.damageMessagesIndex(path) > 1)
        // The new schema declares a durable table the old file never had: nothing of it can be vouched for.
        let schema = SQLiteSchema(
            tables: TestSchema.tables + [.durable("drafts")],
            migrations: [
                TestSchema.version1,
                .init(version: 2, name: "drafts") { try $0.execute("CREATE TABLE drafts(id INTEGER PRIMARY KEY)") },
            ])
        let recovery = try #require(try SQLiteDatabase(path: path, schema: schema).openReport.recovery)
        #expect(recovery.tablesNotKept == ["drafts"])
        #expect(recovery.salvaged.last?.problem?.contains("not found") == true)
    }

    @Test func foreignKeyFindingsAfterSalvageAreReported() throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        let schema = SQLiteSchema(
            tables: [.durable("accounts"), .durable("drafts"), .disposable("messages")],
            migrations: [
                .init(version: 1, name: "create") { db in
                    try db.executeScript(
                        """
                        CREATE TABLE accounts(id INTEGER PRIMARY KEY);
                        CREATE TABLE drafts(id INTEGER PRIMARY KEY, account INTEGER NOT NULL REFERENCES accounts(id));
                        CREATE TABLE messages(id TEXT PRIMARY KEY, body TEXT, seen INTEGER NOT NULL DEFAULT 0);
                        """)
                }
            ])
        try SQLiteDatabase(path: path, schema: schema).writeWithoutTransaction { db in
            // A draft whose account is gone: what salvage leaves when damage took the parent row.
            try db.execute("PRAGMA foreign_keys = OFF")
            try db.execute("INSERT INTO accounts VALUES (1)")
            try db.execute("INSERT INTO drafts VALUES (10, 1), (11, 2)")
            try db.execute("BEGIN")
            for index in 0..<3000 { try db.execute("INSERT INTO messages(id, body) VALUES (?, 'x')", ["m\(index)"]) }
            try db.execute("COMMIT")
        }
        #expect(try TestSchema.damageMessagesIndex(path, schema: schema) > 1)

        let recovery = try #require(try SQLiteDatabase(path: path, schema: schema).openReport.recovery)
        #expect(recovery.salvaged.map(\.rowsCopied) == [1, 2])
        #expect(
            recovery.foreignKeyViolations == [.init(table: "drafts", rowID: 11, parent: "accounts", constraintIndex: 0)]
        )
    }

    @Test func aWALWithoutItsDatabaseIsSetAsideNotApplied() throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        let savedWAL = directory.path("saved-wal")
        do {
            let database = try SQLiteDatabase(path: path, schema: TestSchema.schema)
            try database.write { try $0.execute("INSERT INTO settings VALUES ('kept', 'in the WAL')") }
            try FileManager.default.copyItem(atPath: path + "-wal", toPath: savedWAL)
        }
        // What a crash between moving the database and moving its WAL would leave.
        try FileManager.default.moveItem(atPath: path, toPath: path + ".corrupt-20261130T000000Z")
        try FileManager.default.copyItem(atPath: savedWAL, toPath: path + "-wal")
        let walBytes = try Data(contentsOf: URL(fileURLWithPath: savedWAL))

        let database = try SQLiteDatabase(path: path, schema: TestSchema.schema)
        #expect(database.openReport.recovery == nil)
        #expect(database.openReport.createdFile)
        #expect(try database.read { try $0.fetchOne(Int.self, "SELECT count(*) FROM settings") } == 0)
        let orphan = try #require(try directory.files().first { $0.contains(".orphaned-") && $0.hasSuffix("-wal") })
        #expect(try Data(contentsOf: directory.url.appendingPathComponent(orphan)) == walBytes)
    }

    // MARK: Key check

    @Test func aDamagedKeyCheckIsToldApartFromAWrongKey() throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        let key = TidingsCrypto.SymmetricKey.random()
        do {
            let database = try SQLiteDatabase(
                path: path, schema: TestSchema.schema, configuration: .init(cipher: try ValueCipher(key: key)))
            try database.write { db in
                var bytes = try #require(
                    try db.fetchOne([UInt8].self, "SELECT value FROM tidings_meta WHERE name = 'key_check'"))
                bytes[bytes.count - 3] ^= 0x40
                try db.execute("UPDATE tidings_meta SET value = ? WHERE name = 'key_check'", [bytes])
            }
        }
        #expect(throws: StoreError.damagedKeyCheck) {
            try SQLiteDatabase(
                path: path, schema: TestSchema.schema, configuration: .init(cipher: try ValueCipher(key: key)))
        }
        #expect(throws: StoreError.wrongKey) {
            try SQLiteDatabase(
                path: path, schema: TestSchema.schema,
                configuration: .init(cipher: try ValueCipher(key: TidingsCrypto.SymmetricKey.random())))
        }
        #expect(try directory.files() == ["store.sqlite", "store.sqlite.lock"])
    }

    // MARK: Sealed values

    @Test func theRowTagIsKeyedSoRowKeysCannotBeTestedWithoutTheKey() throws {
        let key = TidingsCrypto.SymmetricKey.random()
        let cipher = try ValueCipher(key: key)
        let sealed = try cipher.seal("hi", table: "contacts", column: "name", rowID: "+41791234567")
        #expect(sealed.bytes[0] == 2)
        // Anyone can compute the unkeyed hash of a guess; it must not match what the file holds.
        let guess = ValueCipher.associatedData(
            version: 1, table: "contacts", column: "name", rowID: .text("+41791234567"))
        #expect(Array(sealed.bytes[1..<9]) != Array(TidingsCrypto.SHA256.hash(guess).prefix(8)))
        let other = try ValueCipher(key: TidingsCrypto.SymmetricKey.random())
            .seal("hi", table: "contacts", column: "name", rowID: "+41791234567")
        #expect(Array(sealed.bytes[1..<9]) != Array(other.bytes[1..<9]))
        #expect(try cipher.openString(sealed, table: "contacts", column: "name", rowID: "+41791234567") == "hi")
        #expect(throws: StoreError.wrongRow) {
            try cipher.open(sealed, table: "contacts", column: "name", rowID: "+41790000000")
        }
    }

    @Test func theRowTagIsHMACSHA256UnderTheDerivedKey() throws {
        let cipher = try ValueCipher(key: TidingsCrypto.SymmetricKey.random())
        for rowID in [SQLiteValue.integer(42), .text("a/b"), .blob([1, 2, 3])] {
            let binding = ValueCipher.associatedData(version: 2, table: "t", column: "c", rowID: rowID)
            let expected = TidingsCrypto.HMACSHA256.authenticationCode(for: binding, key: cipher.rowTagKey).prefix(8)
            #expect(cipher.bindingTag(binding, version: 2) == Array(expected))
        }
    }

    @Test func valuesSealedInTheFirstFormatStillOpen() throws {
        let key = TidingsCrypto.SymmetricKey.random()
        let cipher = try ValueCipher(key: key)
        // Format 1, as the previous release wrote it: unkeyed SHA-256 row tag, "v1" associated data.
        let binding = ValueCipher.associatedData(version: 1, table: "outbox", column: "payload", rowID: .integer(7))
        let box = try TidingsCrypto.AESGCM.sealCombined(Array("old".utf8), key: key, authenticating: binding)
        let legacy = SealedValue(bytes: [1] + Array(TidingsCrypto.SHA256.hash(binding).prefix(8)) + box)
        #expect(try cipher.openString(legacy, table: "outbox", column: "payload", rowID: Int64(7)) == "old")
        #expect(throws: StoreError.wrongRow) {
            try cipher.open(legacy, table: "outbox", column: "payload", rowID: Int64(8))
        }
        // A format-2 value relabelled as format 1 (with a matching unkeyed tag) does not open.
        let current = try cipher.seal(Array("new".utf8), table: "outbox", column: "payload", rowID: Int64(7))
        let relabelled = SealedValue(
            bytes: [1] + Array(TidingsCrypto.SHA256.hash(binding).prefix(8)) + current.bytes[9...])
        #expect(throws: StoreError.tampered) {
            try cipher.open(relabelled, table: "outbox", column: "payload", rowID: Int64(7))
        }
    }

    // MARK: WAL size

    @Test func theWALStaysNearItsLimit() throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        let limit = 64 << 10
        let database = try SQLiteDatabase(
            path: path, schema: TestSchema.schema, configuration: .init(walSizeLimit: limit))
        var largest = 0
        for batch in 0..<200 {
            try database.write { db in
                for index in 0..<4 {
                    try db.execute(
                        "INSERT INTO outbox(id, payload, created_at) VALUES (?, ?, 0)",
                        [batch * 4 + index, [UInt8](repeating: UInt8(index), count: 4000)])
                }
            }
            let size = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int ?? 0
            largest = max(largest, size)
        }
        // Checkpointed once past the limit and truncated back to it: at most the limit plus one transaction
        // (about 5 pages here) and a page of slack, although 3.2 MB went through the WAL.
        #expect(largest <= limit + 8 * 4096 + 4096, "largest -wal: \(largest) bytes")
    }

    @Test func checkpointTruncatesTheWAL() async throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        let database = try SQLiteDatabase(path: path, schema: TestSchema.schema)
        try await database.write { try $0.execute("INSERT INTO settings VALUES ('a', 'b')") }
        #expect(try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int ?? 0 > 0)
        #expect(try await database.checkpoint())
        #expect(try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int == 0)
    }

    // MARK: Async access

    @Test func asyncAccessRunsOnTheStoresQueueNotTheCallersThread() async throws {
        let database = try SQLiteDatabase.inMemory(schema: TestSchema.schema)
        let onQueue = try await database.write { db in
            try db.execute("INSERT INTO settings VALUES ('a', 'b')")
            return DispatchQueue.getSpecific(key: SQLiteDatabase.queueKey) == true
        }
        #expect(onQueue)
        let value = try await database.read { db in
            (
                try db.fetchOne(String.self, "SELECT value FROM settings"),
                DispatchQueue.getSpecific(key: SQLiteDatabase.queueKey)
            )
        }
        #expect(value.0 == "b")
        #expect(value.1 == true)
    }

    /// An engine shaped actor that adopts the store's executor.
    private actor Engine {
        let database: SQLiteDatabase
        nonisolated var unownedExecutor: UnownedSerialExecutor { database.executor.asUnownedSerialExecutor() }
        init(database: SQLiteDatabase) { self.database = database }

        func save(_ value: String) throws -> Bool {
            try database.write { try $0.execute("INSERT INTO settings VALUES ('engine', ?)", [value]) }
            return DispatchQueue.getSpecific(key: SQLiteDatabase.queueKey) == true
        }

        func readBack() async throws -> String? {
            // The async accessors queue behind this job on the same queue: no deadlock.
            try await database.read { try $0.fetchOne(String.self, "SELECT value FROM settings WHERE key = 'engine'") }
        }
    }

    @Test func anActorOnTheStoresExecutorRunsItsStoreCallsOnTheStoresQueue() async throws {
        let engine = Engine(database: try SQLiteDatabase.inMemory(schema: TestSchema.schema))
        #expect(try await engine.save("on queue"))
        #expect(try await engine.readBack() == "on queue")
    }

    @Test func openingAsynchronouslyGivesTheSameStore() async throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        try fill(path, rows: 10)
        let database = try await SQLiteDatabase.open(path: path, schema: TestSchema.schema)
        #expect(database.openReport.recovery == nil)
        #expect(try await database.read { try $0.fetchOne(Int.self, "SELECT count(*) FROM outbox") } == 10)
        // The same typed errors as the synchronous init.
        await #expect(throws: StoreError.cannotOpen) {
            try await SQLiteDatabase.open(path: directory.path("missing/store.sqlite"), schema: TestSchema.schema)
        }
    }

    @Test func asyncAccessChecksCancellationBeforeItStarts() async throws {
        let database = try SQLiteDatabase.inMemory(schema: TestSchema.schema)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await database.write { try $0.execute("INSERT INTO settings VALUES ('a', 'b')") }
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(try await database.read { try $0.fetchOne(Int.self, "SELECT count(*) FROM settings") } == 0)
    }
}
