import CSQLite
import Foundation
import PeerSupport
import Testing

@testable import TidingsCore

@Suite(.timeLimit(.minutes(1))) struct StoreRecoveryTests {
    /// 2026-11-30 06:10:00 UTC: the moved-aside name is predictable.
    static let fixedNow = Date(timeIntervalSince1970: 1_796_019_000)
    static let configuration = SQLiteDatabase.Configuration(now: { fixedNow })

    private func fill(_ path: String, rows: Int = 50) throws {
        let database = try SQLiteDatabase(path: path, schema: TestSchema.schema)
        try database.write { db in
            try db.execute("INSERT INTO settings VALUES ('theme', 'dark')")
            for index in 0..<rows {
                try db.execute(
                    "INSERT INTO outbox(id, payload, created_at) VALUES (?, ?, ?)",
                    [index, [UInt8](repeating: UInt8(index % 256), count: 64), 1000 + index])
                try db.execute("INSERT INTO messages(id, body) VALUES (?, ?)", ["m\(index)", "cached \(index)"])
            }
        }
    }

    private func counts(_ database: SQLiteDatabase) throws -> [String: Int] {
        try database.read { db in
            var counts: [String: Int] = [:]
            for table in ["settings", "outbox", "messages"] {
                counts[table] = try db.fetchOne(Int.self, "SELECT count(*) FROM \(table)")
            }
            return counts
        }
    }

    @Test func randomBytesAreMovedAsideAndAFreshStoreOpens() throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        var generator = SystemRandomNumberGenerator()
        let garbage = Data((0..<8192).map { _ in UInt8.random(in: 0...255, using: &generator) })
        try garbage.write(to: URL(fileURLWithPath: path))

        let log = LogCollector()
        let database = try SQLiteDatabase(
            path: path, schema: TestSchema.schema,
            configuration: .init(
                now: { Self.fixedNow }, logger: TidingsLogger(subsystem: "test", minimumLevel: .debug, sink: log.append)
            ))
        let recovery = try #require(database.openReport.recovery)
        #expect(log.records.contains { $0.level == .warning && $0.message.contains(recovery.movedTo) })
        guard case .notADatabase = recovery.reason else {
            Issue.record("expected notADatabase, got \(recovery.reason)")
            return
        }
        #expect(recovery.movedTo == path + ".corrupt-20261130T061000Z")
        #expect(try Data(contentsOf: URL(fileURLWithPath: recovery.movedTo)) == garbage)
        #expect(recovery.date == Self.fixedNow)
        #expect(!recovery.keptAllDurableData)
        #expect(try counts(database) == ["settings": 0, "outbox": 0, "messages": 0])
        try database.write { try $0.execute("INSERT INTO settings VALUES ('a', 'b')") }
    }

    @Test func aTruncatedFileIsReplacedAndItsReadableRowsKept() throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        try fill(path, rows: 2000)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: UInt64(size / 2))
        try handle.close()

        let database = try SQLiteDatabase(path: path, schema: TestSchema.schema, configuration: Self.configuration)
        let recovery = try #require(database.openReport.recovery)
        switch recovery.reason {
        case .corrupt, .notADatabase: break
        default: Issue.record("unexpected reason \(recovery.reason)")
        }
        // Whatever was readable of the durable tables is in the fresh store, and the report says how much.
        let outbox = try #require(recovery.salvaged.first { $0.table == "outbox" })
        // Half the file survives, so a good part of the outbox does: rows before the first missing page.
        #expect(outbox.rowsCopied > 100)
        #expect(outbox.problem != nil)
        let counted = try counts(database)
        #expect(counted["outbox"] == outbox.rowsCopied)
        #expect(counted["messages"] == 0)
        #expect(try FileManager.default.attributesOfItem(atPath: recovery.movedTo)[.size] as? Int == size / 2)
    }

    @Test func aFileTruncatedInsideItsHeaderIsNotADatabase() throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        try fill(path)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: 60)
        try handle.close()
        let database = try SQLiteDatabase(path: path, schema: TestSchema.schema, configuration: Self.configuration)
        #expect(database.openReport.recovery != nil)
        #expect(try counts(database)["settings"] == 0)
    }

    @Test func aDamagedIndexFailsQuickCheckAndEveryDurableRowIsSalvaged() throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        try fill(path, rows: 3000)
        try damageMessagesIndex(path)

        let database = try SQLiteDatabase(path: path, schema: TestSchema.schema, configuration: Self.configuration)
        let recovery = try #require(database.openReport.recovery)
        guard case .corrupt = recovery.reason else {
            Issue.record("expected corrupt, got \(recovery.reason)")
            return
        }
        #expect(recovery.keptAllDurableData)
        #expect(recovery.salvaged.map(\.table) == ["settings", "outbox"])
        #expect(try counts(database) == ["settings": 1, "outbox": 3000, "messages": 0])
        let payload = try database.read {
            try $0.fetchOne([UInt8].self, "SELECT payload FROM outbox WHERE id = 2999")
        }
        #expect(payload == [UInt8](repeating: UInt8(2999 % 256), count: 64))
    }

    @Test func withoutTheIntegrityCheckDamageSurfacesAsATypedErrorOnUse() throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        try fill(path, rows: 3000)
        try damageMessagesIndex(path)
        do {
            let database = try SQLiteDatabase(
                path: path, schema: TestSchema.schema, configuration: .init(checksIntegrityOnOpen: false))
            #expect(database.openReport.recovery == nil)
            #expect(try database.read { try $0.fetchOne(Int.self, "SELECT count(*) FROM outbox") } == 3000)
            // count(*) scans the smaller index, which is the damaged page.
            #expect(throws: StoreError.corrupt) {
                try database.read { try $0.fetchOne(Int.self, "SELECT count(*) FROM messages") }
            }
        }
        // The next open with the check on replaces the file and keeps the durable rows.
        let database = try SQLiteDatabase(path: path, schema: TestSchema.schema, configuration: Self.configuration)
        #expect(database.openReport.recovery?.keptAllDurableData == true)
        #expect(try counts(database) == ["settings": 1, "outbox": 3000, "messages": 0])
    }

    /// Overwrites the root page of the messages primary-key index: the table data stays intact.
    private func damageMessagesIndex(_ path: String) throws {
        #expect(try TestSchema.damageMessagesIndex(path) > 1)
    }

    @Test func aFutureSchemaIsMovedAsideAndDurableTablesCopied() throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        try fill(path)
        do {
            // A newer app version added a column to a durable table and bumped the version.
            let newer = SQLiteSchema(
                tables: TestSchema.tables,
                migrations: [
                    TestSchema.version1,
                    .init(version: 2, name: "outbox priority") { db in
                        try db.execute("ALTER TABLE outbox ADD COLUMN priority INTEGER NOT NULL DEFAULT 0")
                    },
                ])
            _ = try SQLiteDatabase(path: path, schema: newer)
        }
        let database = try SQLiteDatabase(path: path, schema: TestSchema.schema, configuration: Self.configuration)
        let recovery = try #require(database.openReport.recovery)
        #expect(recovery.reason == .schemaTooNew(found: 2, known: 1))
        #expect(recovery.keptAllDurableData)
        #expect(recovery.salvaged.map(\.rowsCopied) == [1, 50])
        #expect(try counts(database) == ["settings": 1, "outbox": 50, "messages": 0])
        #expect(try database.read { try $0.userVersion() } == 1)
        #expect(FileManager.default.fileExists(atPath: recovery.movedTo))
    }

    @Test func aMigrationThatFailsOnOldDataKeepsDurableRowsAndRebuildsCaches() throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        try fill(path)
        try SQLiteDatabase(path: path, schema: TestSchema.schema).write { db in
            try db.execute("UPDATE messages SET body = 'same'")
        }
        // Version 2 adds a unique index that the cached messages violate; on an empty store it works.
        let version2 = SQLiteSchema(
            tables: TestSchema.tables,
            migrations: [
                TestSchema.version1,
                .init(version: 2, name: "unique bodies") { db in
                    try db.execute("CREATE UNIQUE INDEX messages_body ON messages(body)")
                },
            ])
        let database = try SQLiteDatabase(path: path, schema: version2, configuration: Self.configuration)
        let recovery = try #require(database.openReport.recovery)
        guard case .migrationFailed(let version, _) = recovery.reason else {
            Issue.record("expected migrationFailed, got \(recovery.reason)")
            return
        }
        #expect(version == 2)
        #expect(recovery.keptAllDurableData)
        #expect(try counts(database) == ["settings": 1, "outbox": 50, "messages": 0])
        #expect(try database.read { try $0.userVersion() } == 2)
    }

    @Test func aMigrationThatFailsEvenOnAnEmptyStoreThrowsAndLeavesTheFileAlone() throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        try fill(path)
        let broken = SQLiteSchema(
            tables: TestSchema.tables,
            migrations: [
                TestSchema.version1,
                .init(version: 2, name: "typo") { db in try db.execute("ALTER TABLE outbx ADD COLUMN x") },
            ])
        let error = #expect(throws: StoreError.self) { try SQLiteDatabase(path: path, schema: broken) }
        #expect(error == .migrationFailed)
        #expect(error?.message.contains("migration 2 'typo'") == true)
        #expect(try directory.files() == ["store.sqlite", "store.sqlite.lock"])
        let database = try SQLiteDatabase(path: path, schema: TestSchema.schema)
        #expect(database.openReport.recovery == nil)
        #expect(try counts(database) == ["settings": 1, "outbox": 50, "messages": 50])
    }

    @Test func anEmptyExistingFileIsANewStoreNotARecovery() throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        let database = try SQLiteDatabase(path: path, schema: TestSchema.schema)
        #expect(database.openReport.recovery == nil)
        #expect(database.openReport.migratedTo == 1)
    }

    /// Each round's seed is printed; set `TIDINGS_STORE_DAMAGE_SEED` to replay one.
    @Test(arguments: 0..<12) func randomDamageNeverCrashesAndLeavesAUsableStore(round: Int) throws {
        let replay = ProcessInfo.processInfo.environment["TIDINGS_STORE_DAMAGE_SEED"].flatMap { UInt64($0) }
        let seed = replay ?? UInt64.random(in: 0...UInt64.max)
        print("randomDamageNeverCrashesAndLeavesAUsableStore round \(round) seed \(seed)")
        try damageAndReopen(round: round, seed: seed)
    }

    /// Seeds that found bugs: a header SQLite cannot use ("unsupported file format"), and a garbled length
    /// reported as SQLITE_TOOBIG before `quick_check` runs; both must be recovered from, never thrown.
    @Test(arguments: [(6, UInt64(15_230_847_489_189_056_693)), (7, UInt64(11_145_754_451_650_328_803))])
    func damageThatFoundBugsIsRecoveredFrom(round: Int, seed: UInt64) throws {
        try damageAndReopen(round: round, seed: seed)
    }

    private func damageAndReopen(round: Int, seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        let rows = 400
        try fill(path, rows: rows)
        let original = ["settings": 1, "outbox": rows, "messages": rows]
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        // A few random runs of random bytes, anywhere, the header included.
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            let start = Int.random(in: 0..<bytes.count, using: &random)
            let length = min(Int.random(in: 1...512, using: &random), bytes.count - start)
            for index in start..<start + length { bytes[index] = UInt8.random(in: 0...255, using: &random) }
        }
        if round % 3 == 0 { bytes.removeLast(Int.random(in: 0..<bytes.count, using: &random)) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        let database: SQLiteDatabase
        do {
            database = try SQLiteDatabase(path: path, schema: TestSchema.schema, configuration: Self.configuration)
        } catch {
            Issue.record("round \(round) seed \(seed): opening the damaged file threw \(error)")
            return
        }
        let counted = try counts(database)
        if let recovery = database.openReport.recovery {
            #expect(recovery.salvaged.map(\.table) == ["settings", "outbox"], "seed \(seed)")
            for table in recovery.salvaged {
                // Per table: what the store holds is what the report says was kept, never more than was there,
                // and a table reported complete kept every row.
                #expect(counted[table.table] == table.rowsCopied, "seed \(seed) table \(table.table)")
                #expect(table.rowsCopied <= original[table.table] ?? 0, "seed \(seed) table \(table.table)")
                if table.isComplete {
                    #expect(table.rowsCopied == original[table.table], "seed \(seed) table \(table.table)")
                } else {
                    #expect(recovery.tablesNotKept.contains(table.table), "seed \(seed) table \(table.table)")
                }
            }
            #expect(counted["messages"] == 0, "seed \(seed)")
        } else {
            // Damage that SQLite does not see (free pages, unused bytes) leaves every table as it was.
            #expect(counted == original, "seed \(seed)")
        }
        try database.write { try $0.execute("INSERT OR REPLACE INTO settings VALUES ('after', 'damage')") }
        #expect(
            try database.read { try $0.fetchOne(String.self, "SELECT value FROM settings WHERE key = 'after'") }
                == "damage", "seed \(seed)")
    }

    @Test func undeclaredTablesAreRefused() throws {
        let schema = SQLiteSchema(
            tables: [.durable("a")],
            migrations: [.init(version: 1, name: "x") { try $0.executeScript("CREATE TABLE a(x); CREATE TABLE b(y);") }]
        )
        let error = #expect(throws: StoreError.self) { try SQLiteDatabase.inMemory(schema: schema) }
        #expect(error == .misuse)
        #expect(error?.message.contains("table b") == true)
    }

    @Test func migrationVersionsMustRunWithoutGaps() throws {
        let schema = SQLiteSchema(
            tables: [], migrations: [.init(version: 2, name: "skips one") { _ in }])
        #expect(throws: StoreError.misuse) { try SQLiteDatabase.inMemory(schema: schema) }
    }

    @Test func aMissingDirectoryCannotOpen() throws {
        let directory = try StoreTemporaryDirectory()
        #expect(throws: StoreError.cannotOpen) {
            try SQLiteDatabase(path: directory.path("missing/store.sqlite"), schema: TestSchema.schema)
        }
    }
}
