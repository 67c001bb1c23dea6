import Foundation
import Testing

@testable import TidingsCore

@Suite(.timeLimit(.minutes(1))) struct StoreFileModeTests {
    private func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? Int ?? -1) & 0o777
    }

    @Test func theDatabaseAndItsWALAndSHMAreOwnerOnly() throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        // Under the usual umask 022, SQLite alone would create these 0644.
        let database = try SQLiteDatabase(path: path, schema: TestSchema.schema)
        try database.write { try $0.execute("INSERT INTO settings VALUES ('a', 'b')") }
        // While the connection is open, the WAL and shared-memory files exist; the lock file always does.
        #expect(try directory.files() == ["store.sqlite", "store.sqlite-shm", "store.sqlite-wal", "store.sqlite.lock"])
        for file in try directory.files() {
            #expect(try mode(directory.path(file)) == 0o600, "\(file)")
        }
    }

    @Test func aRollbackJournalGetsTheDatabaseFilesMode() throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        let database = try SQLiteDatabase(path: path, schema: TestSchema.schema)
        try database.writeWithoutTransaction { try $0.execute("PRAGMA journal_mode = DELETE") }
        let journalMode = try database.write { db in
            try db.execute("INSERT INTO settings VALUES ('a', 'b')")
            // Inside the transaction, after the first change, the rollback journal exists.
            return try mode(path + "-journal")
        }
        #expect(journalMode == 0o600)
    }

    @Test func anExistingWorldReadableFileIsTightened() throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        _ = try SQLiteDatabase(path: path, schema: TestSchema.schema)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        _ = try SQLiteDatabase(path: path, schema: TestSchema.schema)
        #expect(try mode(path) == 0o600)
    }

    @Test func aReplacementStoreIsOwnerOnlyToo() throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        try Data(repeating: 7, count: 4096).write(to: URL(fileURLWithPath: path))
        let database = try SQLiteDatabase(path: path, schema: TestSchema.schema)
        #expect(database.openReport.recovery != nil)
        #expect(try mode(path) == 0o600)
        #expect(try mode(path + "-wal") == 0o600)
    }
}
