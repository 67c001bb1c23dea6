import CSQLite
import Foundation

extension SQLiteOpener {
    /// Opens an existing file for reading only: nothing is created, migrated, moved or replaced.
    ///
    /// A file whose `-wal` and `-shm` are both absent (every connection closed cleanly) is opened `immutable`, since
    /// a plain read-only connection would create both companions; one with companions is opened `mode=ro`, which
    /// uses the ones already there. No `.lock` is taken either: this connection never replaces the file, and a
    /// file replaced under it leaves it reading the moved-aside copy, which it does not change.
    ///
    /// - Throws: ``StoreError/cannotOpen`` when the file does not exist; ``StoreError/notADatabase`` and
    ///   ``StoreError/corrupt`` for a damaged file; ``StoreError/wrongKey`` / ``StoreError/damagedKeyCheck``;
    ///   ``StoreError/schemaTooNew``; ``StoreError/readOnly`` when the file's schema is older than `schema` (it
    ///   would need migrating); ``StoreError/misuse`` when it has tables `schema` does not declare (another
    ///   program's file).
    func openReadOnly() throws -> (OpaquePointer, SQLiteDatabase.OpenReport) {
        guard path != ":memory:", !path.isEmpty else { throw StoreError.misuse("a read-only store needs a file") }
        let manager = FileManager.default
        guard manager.fileExists(atPath: path) else {
            throw StoreError(.cannotOpen, message: "no store at \(path)")
        }
        let quiescent = !manager.fileExists(atPath: path + "-wal") && !manager.fileExists(atPath: path + "-shm")
        let uri = "file:\(Self.uriEscaped(path))?mode=ro" + (quiescent ? "&immutable=1" : "")
        let handle = try Self.openHandle(uri, flags: SQLITE_OPEN_READONLY | SQLITE_OPEN_URI)
        do {
            sqlite3_extended_result_codes(handle, 1)
            sqlite3_busy_timeout(handle, 1000)
            let db = SQLiteConnection(handle: handle)
            defer { db.finalizeStatements() }
            // The first read of the header: a file that is not a database fails here.
            _ = try db.fetchOne(Int.self, "SELECT count(*) FROM sqlite_master")
            try configuration.cipher?.verifyKey(in: db)
            if configuration.checksIntegrityOnOpen, let problem = try quickCheck(db) {
                throw StoreError(.corrupt, message: problem)
            }
            // Another program's file is named as such before its version is looked at.
            try checkDeclaredTables(db)
            let found = try db.userVersion()
            if found > schema.version { throw StoreError.schemaTooNew(found: found, known: schema.version) }
            if found < schema.version {
                throw StoreError(
                    .readOnly,
                    message: "the store is at schema version \(found), older than \(schema.version); "
                        + "opened read-only it cannot be migrated")
            }
            return (
                handle,
                SQLiteDatabase.OpenReport(createdFile: false, migratedFrom: found, migratedTo: found, recovery: nil)
            )
        } catch {
            Self.close(handle)
            throw error
        }
    }

    /// `path` as the path of a `file:` URI: the characters URIs give a meaning to are percent-encoded.
    static func uriEscaped(_ path: String) -> String {
        var escaped = ""
        for character in path.unicodeScalars {
            switch character {
            case "%": escaped += "%25"
            case "?": escaped += "%3f"
            case "#": escaped += "%23"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }
}
