import Foundation
import PeerSupport
import Testing

@testable import TidingsCore

@Suite(.timeLimit(.minutes(1))) struct DatabaseTransactionTests {
    @Test func writeCommitsWhenTheClosureReturns() throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        do {
            let database = try SQLiteDatabase(path: path, schema: TestSchema.schema)
            #expect(database.openReport.createdFile)
            #expect(database.openReport.migratedTo == 1)
            try database.write { db in
                try db.execute("INSERT INTO settings(key, value) VALUES (?, ?)", ["theme", "dark"])
                #expect(db.changes == 1)
            }
        }
        let reopened = try SQLiteDatabase(path: path, schema: TestSchema.schema)
        #expect(!reopened.openReport.createdFile)
        #expect(reopened.openReport.recovery == nil)
        let value = try reopened.read {
            try $0.fetchOne(String.self, "SELECT value FROM settings WHERE key = ?", ["theme"])
        }
        #expect(value == "dark")
    }

    @Test func writeRollsBackEverythingWhenTheClosureThrows() throws {
        struct Abort: Error {}
        let database = try SQLiteDatabase.inMemory(schema: TestSchema.schema)
        try database.write { try $0.execute("INSERT INTO settings VALUES ('kept', 'yes')") }
        #expect(throws: Abort.self) {
            try database.write { db in
                try db.execute("INSERT INTO settings VALUES ('a', '1')")
                try db.execute("UPDATE settings SET value = 'no' WHERE key = 'kept'")
                throw Abort()
            }
        }
        let rows = try database.read { db in
            try db.fetchAll("SELECT key, value FROM settings ORDER BY key") { row in
                "\(try row[0] as String)=\(try row[1] as String)"
            }
        }
        #expect(rows == ["kept=yes"])
        // The connection is usable again: no transaction was left open.
        try database.write { try $0.execute("INSERT INTO settings VALUES ('b', '2')") }
    }

    @Test func aFailedStatementRollsBackTheWholeTransaction() throws {
        let database = try SQLiteDatabase.inMemory(schema: TestSchema.schema)
        #expect(throws: StoreError.constraint) {
            try database.write { db in
                try db.execute("INSERT INTO settings VALUES ('a', '1')")
                try db.execute("INSERT INTO settings VALUES ('a', '2')")
            }
        }
        #expect(try database.read { try $0.fetchOne(Int.self, "SELECT count(*) FROM settings") } == 0)
    }

    @Test func readRefusesStatementsThatWrite() throws {
        let database = try SQLiteDatabase.inMemory(schema: TestSchema.schema)
        let error = #expect(throws: StoreError.self) {
            try database.read { try $0.execute("INSERT INTO settings VALUES ('a', '1')") }
        }
        #expect(error == .readOnly)
        #expect(error?.sql == "INSERT INTO settings VALUES ('a', '1')")
        #expect(try database.read { try $0.fetchOne(Int.self, "SELECT count(*) FROM settings") } == 0)
    }

    @Test func reentrantAccessIsAMisuseNotADeadlock() throws {
        let database = try SQLiteDatabase.inMemory(schema: TestSchema.schema)
        #expect(throws: StoreError.misuse) {
            try database.write { _ in try database.read { _ in 1 } }
        }
        // The outer transaction was rolled back and the lock released.
        #expect(try database.read { _ in 2 } == 2)
    }

    @Test func writeWithoutTransactionAutocommitsEachStatement() throws {
        let database = try SQLiteDatabase.inMemory(schema: TestSchema.schema)
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try database.writeWithoutTransaction { db in
                try db.execute("INSERT INTO settings VALUES ('a', '1')")
                #expect(!db.isInTransaction)
                try db.execute("BEGIN")
                try db.execute("INSERT INTO settings VALUES ('b', '2')")
                throw Abort()
            }
        }
        // 'a' committed on its own; the transaction left open around 'b' was rolled back.
        #expect(try database.read { try $0.fetchAll(String.self, "SELECT key FROM settings") } == ["a"])
    }

    @Test func aStoreLockedByAnotherConnectionFailsBusyAndIsNeverRecovered() async throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        let holder = try SQLiteDatabase(path: path, schema: TestSchema.schema)
        let impatient = SQLiteDatabase.Configuration(busyTimeout: .milliseconds(20))
        let other = try SQLiteDatabase(path: path, schema: TestSchema.schema, configuration: impatient)
        let version2 = SQLiteSchema(
            tables: TestSchema.tables,
            migrations: [
                TestSchema.version1,
                .init(version: 2, name: "index") { try $0.execute("CREATE INDEX m_seen ON messages(seen)") },
            ])
        // SQLite waits out its busy timeout by sleeping on the calling thread: that happens on a thread of
        // its own, never on the test pool, and the outcomes come back as values to assert here.
        let (write, migration, count) = try await onDedicatedThread("busy store") {
            try holder.write { db in
                try db.execute("INSERT INTO settings VALUES ('held', 'yes')")
                let write = Result { try other.write { try $0.execute("INSERT INTO settings VALUES ('other', 'no')") } }
                // A migration that cannot take the lock fails busy: a locked file is not a damaged one.
                let migration = Result {
                    _ = try SQLiteDatabase(path: path, schema: version2, configuration: impatient)
                }
                // Readers still see the last committed state while the writer holds its lock (WAL).
                let count = try other.read { try $0.fetchOne(Int.self, "SELECT count(*) FROM settings") }
                return (write.failure, migration.failure, count)
            }
        }
        #expect(write == .busy)
        #expect(migration == .busy)
        #expect(count == 0)
        #expect(try directory.files().allSatisfy { !$0.contains("corrupt") })
        #expect(try await other.read { try $0.fetchAll(String.self, "SELECT key FROM settings") } == ["held"])
    }

    @Test func aClosedStoreRefusesAccessAndItsFilesCanBeRemoved() throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        let database = try SQLiteDatabase(path: path, schema: TestSchema.schema)
        try database.write { try $0.execute("INSERT INTO settings VALUES ('a', 'b')") }
        database.close()
        database.close()
        #expect(throws: StoreError.misuse) { try database.read { _ in 1 } }
        // Closing the last connection folds the WAL back into the file.
        #expect(try directory.files() == ["store.sqlite", "store.sqlite.lock"])
        try SQLiteDatabase.removeFiles(at: path)
        #expect(try directory.files() == [])
        try SQLiteDatabase.removeFiles(at: path)
    }

    @Test func concurrentWritersAreSerialized() async throws {
        let database = try SQLiteDatabase.inMemory(schema: TestSchema.schema)
        try await database.write { try $0.execute("INSERT INTO settings VALUES ('n', '0')") }
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<50 {
                        try? await database.write { db in
                            let value =
                                try db.fetchOne(String.self, "SELECT value FROM settings WHERE key = 'n'") ?? "0"
                            try db.execute(
                                "UPDATE settings SET value = ? WHERE key = 'n'", [String((Int(value) ?? 0) + 1)])
                        }
                    }
                }
            }
        }
        #expect(
            try await database.read { try $0.fetchOne(String.self, "SELECT value FROM settings WHERE key = 'n'") }
                == "400")
    }
}

extension Result where Failure == any Error {
    /// The error as a ``StoreError``, or nil on success or another error.
    fileprivate var failure: StoreError? {
        if case .failure(let error) = self { error as? StoreError } else { nil }
    }
}
