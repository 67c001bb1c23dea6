import CSQLite
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Opens a store file: creation with mode 0600, pragmas, checks, migrations, and recovery by replacement.
struct DatabaseOpener {
    let path: String
    let schema: DatabaseSchema
    let configuration: Database.Configuration

    init(path: String, schema: DatabaseSchema, configuration: Database.Configuration) {
        self.path = path
        self.schema = schema
        self.configuration = configuration
    }

    private var isInMemory: Bool { path == ":memory:" || path.isEmpty }
    private var logger: Logger { configuration.logger.scoped("store") }

    /// The result of one attempt on the file at `path`.
    private enum Attempt {
        case ready(OpaquePointer, migratedFrom: Int)
        case replace(RecoveryReport.Reason)
    }

    func open() throws -> (OpaquePointer, Database.OpenReport) {
        let created = try isInMemory ? false : Self.createFileIfMissing(path)
        switch try attempt() {
        case .ready(let handle, let from):
            return (
                handle,
                Database.OpenReport(createdFile: created, migratedFrom: from, migratedTo: schema.version, recovery: nil)
            )
        case .replace(let reason):
            guard !isInMemory else { throw StoreError(.corrupt, message: "in-memory store failed to open: \(reason)") }
            let date = configuration.now()
            let movedTo = try Self.moveAside(path, date: date)
            logger.warning("store file replaced (\(reason)); the old file is at \(movedTo)")
            _ = try Self.createFileIfMissing(path)
            guard case .ready(let handle, _) = try attempt() else {
                throw StoreError(.corrupt, message: "a fresh store at \(path) failed its own checks")
            }
            let salvaged = salvage(from: movedTo, into: handle)
            let recovery = RecoveryReport(reason: reason, movedTo: movedTo, date: date, salvaged: salvaged)
            return (
                handle,
                Database.OpenReport(
                    createdFile: created, migratedFrom: 0, migratedTo: schema.version, recovery: recovery)
            )
        }
    }

    // MARK: One attempt

    private func attempt() throws -> Attempt {
        let handle = try Self.openHandle(path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        do {
            try configure(handle)
            let db = DatabaseConnection(handle: handle)
            defer { db.finalizeStatements() }
            // The key first: a wrong key must leave the file alone even when it is also damaged, since the
            // person may only have typed the wrong passphrase.
            try configuration.cipher?.verifyKey(in: db)
            if !isInMemory, configuration.checksIntegrityOnOpen, let problem = try quickCheck(db) {
                Self.close(handle)
                return .replace(.corrupt(problem))
            }
            let found = try db.userVersion()
            if found > schema.version {
                Self.close(handle)
                return .replace(.schemaTooNew(found: found, known: schema.version))
            }
            if found < schema.version {
                if let failure = try migrate(db, from: found) {
                    Self.close(handle)
                    return .replace(failure)
                }
            } else {
                try prepareMetadata(db)
            }
            try checkDeclaredTables(db)
            return .ready(handle, migratedFrom: found)
        } catch let error as StoreError where !isInMemory && (error == .notADatabase || error == .corrupt) {
            Self.close(handle)
            return .replace(error == .notADatabase ? .notADatabase(error.message) : .corrupt(error.message))
        } catch {
            Self.close(handle)
            throw error
        }
    }

    private func configure(_ handle: OpaquePointer) throws {
        sqlite3_extended_result_codes(handle, 1)
        // Bounded before scaling: `.seconds(.max)` ("wait as long as possible") clamps instead of trapping.
        let (seconds, attoseconds) = configuration.busyTimeout.components
        let milliseconds =
            seconds < 0 ? 0 : min(seconds, Int64(Int32.max)) * 1000 + attoseconds / 1_000_000_000_000_000
        sqlite3_busy_timeout(handle, Int32(clamping: milliseconds))
        let db = DatabaseConnection(handle: handle)
        defer { db.finalizeStatements() }
        // The first statement reads the header: a file that is not a database fails here with SQLITE_NOTADB.
        let mode = try db.fetchOne(String.self, "PRAGMA journal_mode = WAL")
        if !isInMemory, mode?.lowercased() != "wal" {
            throw StoreError(.io, message: "could not switch to WAL (journal_mode is \(mode ?? "unknown"))")
        }
        try db.execute("PRAGMA synchronous = NORMAL")
        try db.execute("PRAGMA foreign_keys = ON")
    }

    /// `nil` when the file passes `PRAGMA quick_check`, else SQLite's first complaint.
    ///
    /// Damage can also make the check itself fail (a garbled record length gives SQLITE_TOOBIG, for
    /// example): any failure that is not about the environment (busy, I/O, disk full, permissions) counts
    /// as a complaint about the file.
    private func quickCheck(_ db: DatabaseConnection) throws -> String? {
        let lines: [String]
        do {
            lines = try db.fetchAll(String.self, "PRAGMA quick_check")
        } catch let error as StoreError where !Self.isEnvironmental(error) {
            return "quick_check failed: \(error.message)"
        }
        return lines == ["ok"] ? nil : (lines.first ?? "quick_check returned nothing")
    }

    /// Runs the pending steps in one transaction. Returns a reason to replace the file when the steps fail on
    /// this file's data but succeed on an empty store; throws when they fail on an empty store too (a bug).
    private func migrate(_ db: DatabaseConnection, from found: Int) throws -> RecoveryReport.Reason? {
        do {
            try runMigrations(db, from: found)
            return nil
        } catch {
            // Only a step that fails on its own terms can justify replacing the file. A lock held elsewhere, a
            // full disk or an I/O error says nothing about the data: the file stays, the caller gets the error.
            guard let stepError = error as? MigrationStepError else { throw error }
            if let storeError = stepError.underlying as? StoreError, Self.isEnvironmental(storeError) {
                throw storeError
            }
            let failure = migrationError(error, version: stepError.version)
            logger.error(failure.message)
            if isInMemory || found == 0 { throw failure }
            // Would the steps work on an empty store? If not, replacing the file would not help.
            do {
                let probe = try Self.openHandle(":memory:", flags: SQLITE_OPEN_READWRITE)
                defer { Self.close(probe) }
                let probeDB = DatabaseConnection(handle: probe)
                defer { probeDB.finalizeStatements() }
                try runMigrations(probeDB, from: 0)
            } catch {
                throw migrationError(error, version: failingVersion(error) ?? 1)
            }
            return .migrationFailed(version: stepError.version, message: failure.message)
        }
    }

    /// Failures that come from the file's surroundings (locks, disk, permissions) or its damage, not from what
    /// a migration asked for.
    static func isEnvironmental(_ error: StoreError) -> Bool {
        switch error.code {
        case .busy, .io, .full, .cannotOpen, .readOnly, .notADatabase, .corrupt: true
        default: false
        }
    }

    private func runMigrations(_ db: DatabaseConnection, from found: Int) throws {
        try db.execute("BEGIN IMMEDIATE")
        do {
            for migration in schema.migrations where migration.version > found {
                do { try migration.body(db) } catch { throw MigrationStepError(version: migration.version, error) }
            }
            try prepareMetadata(db)
            // user_version cannot be bound as a parameter; the value is an Int from the schema, not input.
            try db.execute("PRAGMA user_version = \(schema.version)")
            try db.execute("COMMIT")
        } catch {
            if db.isInTransaction { try? db.execute("ROLLBACK") }
            throw error
        }
    }

    private struct MigrationStepError: Error {
        let version: Int
        let underlying: any Error
        init(version: Int, _ underlying: any Error) {
            self.version = version
            self.underlying = underlying
        }
    }

    private func failingVersion(_ error: any Error) -> Int? { (error as? MigrationStepError)?.version }

    private func migrationError(_ error: any Error, version: Int) -> StoreError {
        let underlying = (error as? MigrationStepError)?.underlying ?? error
        let name = schema.migrations.first { $0.version == version }?.name ?? "?"
        return StoreError(
            .migrationFailed, resultCode: (underlying as? StoreError)?.resultCode,
            message: "migration \(version) '\(name)' failed: \(underlying)", sql: (underlying as? StoreError)?.sql)
    }

    /// Every table the migrations made must be declared durable or disposable: otherwise recovery could not
    /// know whether dropping it loses data.
    private func checkDeclaredTables(_ db: DatabaseConnection) throws {
        let declared = Set(schema.tables.map { $0.name.lowercased() } + [ValueCipher.metadataTable])
        let existing = try db.fetchAll(
            String.self, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        if let undeclared = existing.first(where: { !declared.contains($0.lowercased()) }) {
            throw StoreError.misuse("table \(undeclared) is not declared durable or disposable in the schema")
        }
    }

    /// Creates Tidings' own metadata table and records the cipher's key check on first use.
    private func prepareMetadata(_ db: DatabaseConnection) throws {
        try db.execute("CREATE TABLE IF NOT EXISTS tidings_meta(name TEXT PRIMARY KEY, value BLOB NOT NULL)")
        try configuration.cipher?.recordKey(in: db)
    }

    // MARK: Salvage

    /// A reason not to copy from the old file: values sealed under another key would never open.
    private func refusesSalvage(from source: DatabaseConnection) -> String? {
        do {
            try configuration.cipher?.verifyKey(in: source)
            return nil
        } catch StoreError.wrongKey {
            return "the old file was sealed with another key; nothing copied"
        } catch {
            // An unreadable key check (damage) does not prove a different key: copy what can be read.
            return nil
        }
    }

    /// Copies the durable tables' readable rows from the moved-aside file into the fresh store.
    private func salvage(from oldPath: String, into handle: OpaquePointer) -> [RecoveryReport.SalvagedTable] {
        let durable = schema.durableTables
        guard !durable.isEmpty else { return [] }
        let old: OpaquePointer
        do {
            old = try Self.openHandle(oldPath, flags: SQLITE_OPEN_READONLY)
        } catch {
            return durable.map { .init(table: $0, rowsCopied: 0, rowsRefused: 0, problem: "unreadable: \(error)") }
        }
        defer { Self.close(old) }
        let source = DatabaseConnection(handle: old)
        let target = DatabaseConnection(handle: handle)
        defer {
            source.finalizeStatements()
            target.finalizeStatements()
        }
        sqlite3_busy_timeout(old, 1000)
        // A truncated file's header claims more pages than the file has; SQLite refuses to read it at all unless
        // writable_schema is on. The connection is read-only, so this only lets the surviving pages be read.
        try? source.execute("PRAGMA writable_schema = ON")
        if let problem = refusesSalvage(from: source) {
            return durable.map { .init(table: $0, rowsCopied: 0, rowsRefused: 0, problem: problem) }
        }
        // Parents and children are copied table by table; the fresh store checks references afterwards.
        try? target.execute("PRAGMA foreign_keys = OFF")
        defer { try? target.execute("PRAGMA foreign_keys = ON") }
        var results: [RecoveryReport.SalvagedTable] = []
        for table in durable {
            results.append(copyTable(table, from: source, to: target))
        }
        return results
    }

    private func copyTable(
        _ table: String, from source: DatabaseConnection, to target: DatabaseConnection
    ) -> RecoveryReport.SalvagedTable {
        var result = RecoveryReport.SalvagedTable(table: table, rowsCopied: 0, rowsRefused: 0, problem: nil)
        do {
            guard try source.tableExists(table) else { return result }
            let wanted = try target.columnNames(of: table)
            let available = Set(try source.columnNames(of: table))
            let columns = wanted.filter { available.contains($0) }
            guard !columns.isEmpty else {
                result.problem = "no column in common with the new schema"
                return result
            }
            let list = columns.map { "\"\($0.replacingOccurrences(of: "\"", with: "\"\""))\"" }.joined(separator: ", ")
            let quotedTable = "\"\(table.replacingOccurrences(of: "\"", with: "\"\""))\""
            let insert =
                "INSERT OR REPLACE INTO \(quotedTable) (\(list)) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))"
            // WITHOUT ROWID tables have no rowid to follow; for them, count what the table gained instead.
            let hasRowID = (try? target.execute("SELECT rowid FROM \(quotedTable) LIMIT 0")) != nil
            try target.execute("BEGIN IMMEDIATE")
            let countBefore = try target.fetchOne(Int.self, "SELECT count(*) FROM \(quotedTable)") ?? 0
            var insertedRowIDs = Set<Int64>()
            var inserts = 0
            do {
                try source.forEachRow("SELECT \(list) FROM \(quotedTable)") { row in
                    do {
                        try target.execute(insert, row.values)
                        inserts += 1
                        if hasRowID { insertedRowIDs.insert(target.lastInsertRowID) }
                    } catch let error as StoreError where error == .constraint || error == .typeMismatch {
                        result.rowsRefused += 1
                    }
                }
            } catch {
                // Keep what was read before the damaged part; report where it stopped.
                result.problem = "stopped after \(inserts + result.rowsRefused) rows: \(error)"
            }
            // A damaged file can repeat a key; REPLACE then removed the earlier copy. Count only the rows that
            // are still there, and the replaced ones as refused.
            if hasRowID {
                var present = 0
                try target.forEachRow("SELECT rowid FROM \(quotedTable)") { row in
                    if insertedRowIDs.contains(try row[0]) { present += 1 }
                }
                result.rowsCopied = present
            } else {
                let countAfter = try target.fetchOne(Int.self, "SELECT count(*) FROM \(quotedTable)") ?? 0
                result.rowsCopied = min(inserts, countAfter - countBefore)
            }
            result.rowsRefused += inserts - result.rowsCopied
            try target.execute("COMMIT")
        } catch {
            if target.isInTransaction { try? target.execute("ROLLBACK") }
            result.rowsCopied = 0
            result.problem = "\(error)"
        }
        return result
    }

    // MARK: Files

    static func openHandle(_ path: String, flags: Int32) throws -> OpaquePointer {
        var handle: OpaquePointer?
        // NOMUTEX: `Database` serializes every use behind its own lock.
        let code = sqlite3_open_v2(path, &handle, flags | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE, nil)
        guard code == SQLITE_OK, let handle else {
            let error = StoreError.fromSQLite(code, connection: handle)
            sqlite3_close_v2(handle)
            throw error
        }
        return handle
    }

    static func close(_ handle: OpaquePointer) {
        sqlite3_close_v2(handle)
    }

    /// Creates `path` with mode 0600 when it does not exist (SQLite would use 0644), and tightens an existing
    /// file and its companions to 0600. Returns whether the file was created.
    static func createFileIfMissing(_ path: String) throws -> Bool {
        let descriptor = posixOpen(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if descriptor >= 0 {
            _ = closeDescriptor(descriptor)
            return true
        }
        let failure = errno
        guard failure == EEXIST else {
            throw StoreError(.cannotOpen, message: "cannot create \(path): \(String(cString: strerror(failure)))")
        }
        for file in [path, path + "-wal", path + "-shm", path + "-journal"] {
            var info = stat()
            if stat(file, &info) == 0, info.st_mode & 0o077 != 0 { _ = chmod(file, 0o600) }
        }
        return false
    }

    /// Renames `path` and its `-wal`, `-shm` and `-journal` to `<path>.corrupt-<timestamp>[-n]`.
    static func moveAside(_ path: String, date: Date) throws -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        let base = "\(path).corrupt-\(formatter.string(from: date))"
        var target = base
        var counter = 1
        while FileManager.default.fileExists(atPath: target) {
            counter += 1
            target = "\(base)-\(counter)"
        }
        guard rename(path, target) == 0 else {
            throw StoreError(
                .cannotOpen, message: "cannot move \(path) aside: \(String(cString: strerror(errno)))")
        }
        for suffix in ["-wal", "-shm", "-journal"] where FileManager.default.fileExists(atPath: path + suffix) {
            if rename(path + suffix, target + suffix) != 0 {
                // A stale companion left behind would be applied to the fresh file: remove it instead.
                _ = unlink(path + suffix)
            }
        }
        return target
    }
}

private func posixOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
    open(path, flags, mode)
}

private func closeDescriptor(_ descriptor: Int32) -> Int32 {
    close(descriptor)
}
