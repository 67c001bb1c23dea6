import CSQLite
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Opens a store file: creation with mode 0600, pragmas, checks, migrations, and recovery by replacement.
struct SQLiteOpener {
    let path: String
    let schema: SQLiteSchema
    let configuration: SQLiteDatabase.Configuration

    init(path: String, schema: SQLiteSchema, configuration: SQLiteDatabase.Configuration) {
        self.path = path
        self.schema = schema
        self.configuration = configuration
    }

    var isInMemory: Bool { path == ":memory:" || path.isEmpty }
    private var logger: TidingsLogger { configuration.logger.scoped("store") }

    /// The result of one attempt on the file at `path`.
    private enum Attempt {
        case ready(OpaquePointer, migratedFrom: Int)
        case replace(RecoveryReport.Reason)
    }

    /// Opens the file, replacing it when it must be; returns the handle, what happened, and the advisory lock
    /// that the `SQLiteDatabase` holds while it is open (`nil` in memory).
    func open() throws -> (OpaquePointer, SQLiteDatabase.OpenReport, StoreFileLock?) {
        if configuration.readOnly {
            let (handle, report) = try openReadOnly()
            return (handle, report, nil)
        }
        let lock = try isInMemory ? nil : StoreFileLock(databasePath: path)
        if let lock { try setAsideOrphanedCompanions(lock) }
        let created = try isInMemory ? false : Self.createFileIfMissing(path)
        switch try attempt() {
        case .ready(let handle, let from):
            return (
                handle,
                SQLiteDatabase.OpenReport(
                    createdFile: created, migratedFrom: from, migratedTo: schema.version, recovery: nil),
                lock
            )
        case .replace(let reason):
            guard let lock else { throw StoreError(.corrupt, message: "in-memory store failed to open: \(reason)") }
            // Only a file nobody else has open may be replaced: another process's connection would go on
            // writing into the moved-aside file, or into the fresh one while its WAL is swapped underneath.
            try lock.lockExclusively(databasePath: path, patience: configuration.lockPatience)
            defer { lock.lockShared() }
            let date = configuration.now()
            let movedTo = try Self.moveAside(path, date: date)
            logger.warning("store file replaced (\(reason)); the old file is at \(movedTo)")
            _ = try Self.createFileIfMissing(path)
            guard case .ready(let handle, _) = try attempt() else {
                throw StoreError(.corrupt, message: "a fresh store at \(path) failed its own checks")
            }
            let salvaged = salvage(from: movedTo, into: handle)
            let recovery = RecoveryReport(
                reason: reason, movedTo: movedTo, date: date, salvaged: salvaged.tables,
                foreignKeyViolations: salvaged.foreignKeyViolations)
            return (
                handle,
                SQLiteDatabase.OpenReport(
                    createdFile: created, migratedFrom: 0, migratedTo: schema.version, recovery: recovery),
                lock
            )
        }
    }

    /// Opens the connection again after ``SQLiteDatabase/suspend()`` closed it: the same pragmas, the key check,
    /// and the schema version, but no creation, `quick_check`, migration or recovery. The file was healthy and
    /// migrated when the store opened; what another process may have done meanwhile (replaced a damaged file
    /// with a fresh one by the same schema) leaves it so, and anything else is thrown rather than repaired.
    ///
    /// - Throws: ``StoreError/cannotOpen`` when the file is gone (it is not created again, empty) or holds an
    ///   older schema; ``StoreError/schemaTooNew``; ``StoreError/wrongKey``; other ``StoreError``s from SQLite.
    func reopen() throws -> OpaquePointer {
        if configuration.readOnly {
            var quick = configuration
            quick.checksIntegrityOnOpen = false
            return try SQLiteOpener(path: path, schema: schema, configuration: quick).openReadOnly().0
        }
        let handle = try Self.openHandle(path, flags: SQLITE_OPEN_READWRITE)
        do {
            try configure(handle)
            let db = SQLiteConnection(handle: handle)
            defer { db.finalizeStatements() }
            try configuration.cipher?.verifyKey(in: db)
            let found = try db.userVersion()
            if found > schema.version { throw StoreError.schemaTooNew(found: found, known: schema.version) }
            guard found == schema.version else {
                throw StoreError(
                    .cannotOpen,
                    message: "the store at \(path) went back to schema version \(found) while suspended; open it again")
            }
            return handle
        } catch {
            Self.close(handle)
            throw error
        }
    }

    /// A `-wal` (or `-journal`) with no database beside it is what a crash in the middle of ``moveAside(_:date:)``
    /// leaves. SQLite would apply it to the fresh file; it is renamed to `<name>.orphaned-<timestamp>` instead,
    /// never deleted (it may hold the only copy of the last commits). Done only when nobody else has the store
    /// open; otherwise the file is left to the connection that has it.
    private func setAsideOrphanedCompanions(_ lock: StoreFileLock) throws {
        let manager = FileManager.default
        guard !manager.fileExists(atPath: path),
            manager.fileExists(atPath: path + "-wal") || manager.fileExists(atPath: path + "-journal")
        else { return }
        do { try lock.lockExclusively(databasePath: path, patience: configuration.lockPatience) } catch StoreError.busy
        { return }
        defer { lock.lockShared() }
        guard !manager.fileExists(atPath: path) else { return }
        let target = Self.uniqueName("\(path).orphaned-\(Self.timestamp(configuration.now()))")
        for suffix in ["-wal", "-journal"] where manager.fileExists(atPath: path + suffix) {
            guard rename(path + suffix, target + suffix) == 0 else {
                throw StoreError(
                    .io, message: "cannot move the orphaned \(path + suffix) aside: \(String(cString: strerror(errno)))"
                )
            }
        }
        // The -shm is only an index of the WAL, rebuilt from it; it holds no data of its own.
        if manager.fileExists(atPath: path + "-shm"), rename(path + "-shm", target + "-shm") != 0 {
            _ = unlink(path + "-shm")
        }
        logger.warning("a WAL without its database was moved to \(target)-wal")
    }

    // MARK: One attempt

    private func attempt() throws -> Attempt {
        let handle = try Self.openHandle(path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        // Format fields SQLite cannot use are damage: it reports them as a plain SQLITE_ERROR ("unsupported file
        // format"), or opens the file read-only so that every later write fails.
        if !isInMemory, let problem = Self.headerFormatProblem(path) {
            Self.close(handle)
            return .replace(.corrupt(problem))
        }
        do {
            try configure(handle)
            let db = SQLiteConnection(handle: handle)
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
            var migratedFrom = found
            if found < schema.version {
                switch try migrate(db, from: found) {
                case .replace(let failure):
                    Self.close(handle)
                    return .replace(failure)
                case .migrated(let from):
                    migratedFrom = from
                }
            } else {
                try prepareMetadata(db)
            }
            try checkDeclaredTables(db)
            return .ready(handle, migratedFrom: migratedFrom)
        } catch let error as StoreError where !isInMemory && (error == .notADatabase || error == .corrupt) {
            Self.close(handle)
            return .replace(error == .notADatabase ? .notADatabase(error.message) : .corrupt(error.message))
        } catch let error as StoreError where !isInMemory && (error.resultCode ?? 0) & 0xFF == SQLITE_TOOBIG {
            // A length garbled on disk (a page size, a record header) reads as "too big", as in `quickCheck`.
            Self.close(handle)
            return .replace(.corrupt(error.message))
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
        let db = SQLiteConnection(handle: handle)
        defer { db.finalizeStatements() }
        // The first statement reads the header: a file that is not a database fails here with SQLITE_NOTADB.
        let mode = try db.fetchOne(String.self, "PRAGMA journal_mode = WAL")
        if !isInMemory, mode?.lowercased() != "wal" {
            throw StoreError(.io, message: "could not switch to WAL (journal_mode is \(mode ?? "unknown"))")
        }
        try db.execute("PRAGMA synchronous = NORMAL")
        try db.execute("PRAGMA foreign_keys = ON")
        // The WAL is truncated back to the limit after each checkpoint, and checkpointed once it holds about
        // that much, so its size stays near the limit however long the app runs (a reader that never ends
        // still blocks checkpoints; transactions here are short).
        let limit = max(configuration.walSizeLimit, 1)
        let pageSize = max(try db.fetchOne(Int.self, "PRAGMA page_size") ?? 4096, 512)
        try db.execute("PRAGMA journal_size_limit = \(limit)")
        // Each WAL frame is a page plus a 24-byte header. Checkpointing before the WAL reaches the limit means
        // the truncation only happens after a transaction larger than the limit, not on every cycle; 1000
        // frames (SQLite's default cadence) at most, so a large limit does not make checkpoints rarer.
        let frames = min(max(limit / (pageSize + 24), 1), 1000)
        _ = try db.fetchOne(Int.self, "PRAGMA wal_autocheckpoint = \(frames)")
    }

    /// `nil` when the file passes `PRAGMA quick_check`, else SQLite's first complaint.
    ///
    /// Only damage counts as a complaint: the rows the check reports, and the check itself failing with
    /// `SQLITE_CORRUPT`, `SQLITE_NOTADB` or `SQLITE_TOOBIG` (a record length garbled on disk). Contention
    /// (`SQLITE_BUSY`, `SQLITE_LOCKED`, `SQLITE_PROTOCOL`, which another process's WAL checkpoint can cause)
    /// is retried a few times and then thrown; anything else (out of memory, interruption, I/O) is thrown at
    /// once. A thrown error leaves the file alone, since replacing a healthy file loses its disposable data and
    /// races with the connection that caused the contention.
    func quickCheck(_ db: SQLiteConnection) throws -> String? {
        var attempt = 0
        while true {
            attempt += 1
            do {
                if let code = configuration.quickCheckFault?(attempt) {
                    throw StoreError.fromSQLite(code, connection: nil, sql: "PRAGMA quick_check")
                }
                let lines = try db.fetchAll(String.self, "PRAGMA quick_check")
                return lines == ["ok"] ? nil : (lines.first ?? "quick_check returned nothing")
            } catch let error as StoreError {
                let primary = (error.resultCode ?? 0) & 0xFF
                switch primary {
                case SQLITE_CORRUPT, SQLITE_NOTADB, SQLITE_TOOBIG:
                    return "quick_check failed: \(error.message)"
                case SQLITE_BUSY where attempt < Self.quickCheckAttempts,
                    SQLITE_LOCKED where attempt < Self.quickCheckAttempts,
                    SQLITE_PROTOCOL where attempt < Self.quickCheckAttempts:
                    logger.notice("quick_check met contention (\(error.shortDescription)); trying again")
                    continue
                default:
                    throw error
                }
            }
        }
    }

    /// What is wrong with the format fields of the file's 100-byte header, or nil when they are ones SQLite 3
    /// writes: the read and write versions (offsets 18 and 19: 1 legacy, 2 WAL) and the schema format number
    /// (offset 44: 1 to 4, or 0 while the first schema change is still only in the WAL). A file too short to have a header, or without SQLite's magic string, is left to
    /// SQLite's own `SQLITE_NOTADB`.
    static func headerFormatProblem(_ path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: 100), data.count == 100 else { return nil }
        let header = [UInt8](data)
        guard header.starts(with: Array("SQLite format 3\u{0}".utf8)) else { return nil }
        guard (1...2).contains(header[18]), (1...2).contains(header[19]) else {
            return "header read/write versions \(header[18])/\(header[19])"
        }
        let schemaFormat = header[44..<48].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard schemaFormat <= 4 else { return "header schema format \(schemaFormat)" }
        return nil
    }

    /// How often `quick_check` runs before contention is reported as an error.
    static let quickCheckAttempts = 3

    /// Runs the pending steps in one transaction. Returns a reason to replace the file when the steps fail on
    /// this file's data but succeed on an empty store, or the file is newer than the schema by the time the
    /// lock is held; throws when the steps fail on an empty store too (a bug).
    private func migrate(_ db: SQLiteConnection, from found: Int) throws -> MigrationOutcome {
        do {
            // Another process may have migrated between reading `found` and taking the write lock: what counts
            // is the version inside the transaction.
            logger.debug("found version \(found) of \(schema.version); waiting for the write lock to migrate")
            let current = try runMigrations(db, from: found)
            if current > schema.version { return .replace(.schemaTooNew(found: current, known: schema.version)) }
            return .migrated(from: current)
        } catch {
            // Only a step that fails on its own terms can justify replacing the file. A lock held elsewhere, a
            // full disk or an I/O error says nothing about the data: the file stays, the caller gets the error.
            guard let stepError = error as? MigrationStepError else { throw error }
            if let storeError = stepError.underlying as? StoreError, Self.isEnvironmental(storeError) {
                throw storeError
            }
            let failure = migrationError(error, version: stepError.version)
            logger.error(failure.message)
            if isInMemory || stepError.from == 0 { throw failure }
            // Would the steps work on an empty store? If not, replacing the file would not help.
            do {
                let probe = try Self.openHandle(":memory:", flags: SQLITE_OPEN_READWRITE)
                defer { Self.close(probe) }
                let probeDB = SQLiteConnection(handle: probe)
                defer { probeDB.finalizeStatements() }
                _ = try runMigrations(probeDB, from: 0)
            } catch {
                throw migrationError(error, version: failingVersion(error) ?? 1)
            }
            return .replace(.migrationFailed(version: stepError.version, message: failure.message))
        }
    }

    /// What ``migrate(_:from:)`` did: migrated from the version found inside its transaction (equal to the
    /// schema's when another connection had already migrated), or found a reason to replace the file.
    private enum MigrationOutcome {
        case migrated(from: Int)
        case replace(RecoveryReport.Reason)
    }

    /// Failures that come from the file's surroundings (locks, disk, permissions) or its damage, not from what
    /// a migration asked for.
    static func isEnvironmental(_ error: StoreError) -> Bool {
        switch error.code {
        case .busy, .io, .full, .cannotOpen, .readOnly, .notADatabase, .corrupt: true
        default: false
        }
    }

    /// Migrates from the `user_version` read inside the write transaction and returns it; `found` is only
    /// what the caller saw before taking the lock. A file already at (or past) the schema's version is left
    /// as it is.
    private func runMigrations(_ db: SQLiteConnection, from found: Int) throws -> Int {
        try db.execute("BEGIN IMMEDIATE")
        do {
            let current = try db.userVersion()
            if current != found {
                logger.info("another connection migrated the store from \(found) to \(current) meanwhile")
            }
            if current >= schema.version {
                if current == schema.version { try prepareMetadata(db) }
                try db.execute("COMMIT")
                return current
            }
            for migration in schema.migrations where migration.version > current {
                do { try migration.body(db) } catch {
                    throw MigrationStepError(version: migration.version, from: current, error)
                }
            }
            try prepareMetadata(db)
            // user_version cannot be bound as a parameter; the value is an Int from the schema, not input.
            try db.execute("PRAGMA user_version = \(schema.version)")
            try db.execute("COMMIT")
            return current
        } catch {
            if db.isInTransaction { try? db.execute("ROLLBACK") }
            throw error
        }
    }

    private struct MigrationStepError: Error {
        let version: Int
        /// The `user_version` the steps started from (read inside the transaction).
        let from: Int
        let underlying: any Error
        init(version: Int, from: Int, _ underlying: any Error) {
            self.version = version
            self.from = from
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
    func checkDeclaredTables(_ db: SQLiteConnection) throws {
        let declared = Set(schema.tables.map { $0.name.lowercased() } + [ValueCipher.metadataTable])
        let existing = try db.fetchAll(
            String.self, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        if let undeclared = existing.first(where: { !declared.contains($0.lowercased()) }) {
            throw StoreError.misuse("table \(undeclared) is not declared durable or disposable in the schema")
        }
    }

    /// Creates Tidings' own metadata table and records the cipher's key check on first use.
    private func prepareMetadata(_ db: SQLiteConnection) throws {
        try db.execute("CREATE TABLE IF NOT EXISTS tidings_meta(name TEXT PRIMARY KEY, value BLOB NOT NULL)")
        try configuration.cipher?.recordKey(in: db)
    }

    // MARK: Salvage

    /// A reason not to copy from the old file: values sealed under another key would never open.
    private func refusesSalvage(from source: SQLiteConnection) -> String? {
        do {
            try configuration.cipher?.verifyKey(in: source)
            return nil
        } catch StoreError.wrongKey {
            return "the old file was sealed with another key; nothing copied"
        } catch {
            // A damaged or unreadable key check does not prove a different key: copy what can be read.
            return nil
        }
    }

    /// What salvage did: one entry per durable table, and the fresh store's `foreign_key_check` findings.
    struct Salvage {
        var tables: [RecoveryReport.SalvagedTable]
        var foreignKeyViolations: [RecoveryReport.ForeignKeyViolation]
    }

    /// Copies the durable tables' readable rows from the moved-aside file into the fresh store.
    private func salvage(from oldPath: String, into handle: OpaquePointer) -> Salvage {
        let durable = schema.durableTables
        guard !durable.isEmpty else { return Salvage(tables: [], foreignKeyViolations: []) }
        let old: OpaquePointer
        do {
            old = try Self.openHandle(oldPath, flags: SQLITE_OPEN_READONLY)
        } catch {
            return Salvage(
                tables: durable.map {
                    .init(table: $0, rowsCopied: 0, rowsRefused: 0, problem: "unreadable: \(error)")
                },
                foreignKeyViolations: [])
        }
        defer { Self.close(old) }
        let source = SQLiteConnection(handle: old)
        let target = SQLiteConnection(handle: handle)
        defer {
            source.finalizeStatements()
            target.finalizeStatements()
        }
        sqlite3_busy_timeout(old, 1000)
        // A truncated file's header claims more pages than the file has; SQLite refuses to read it at all unless
        // writable_schema is on. The connection is read-only, so this only lets the surviving pages be read.
        try? source.execute("PRAGMA writable_schema = ON")
        if let problem = refusesSalvage(from: source) {
            return Salvage(
                tables: durable.map { .init(table: $0, rowsCopied: 0, rowsRefused: 0, problem: problem) },
                foreignKeyViolations: [])
        }
        // Parents and children are copied table by table; the fresh store checks references afterwards.
        try? target.execute("PRAGMA foreign_keys = OFF")
        defer { try? target.execute("PRAGMA foreign_keys = ON") }
        var results: [RecoveryReport.SalvagedTable] = []
        for table in durable {
            results.append(copyTable(table, from: source, to: target))
        }
        return Salvage(tables: results, foreignKeyViolations: foreignKeyCheck(target))
    }

    /// Rows whose references point nowhere after salvage (a parent row lost to the damage). They are kept and
    /// reported: deleting them would lose more of what only the device has.
    private func foreignKeyCheck(_ target: SQLiteConnection) -> [RecoveryReport.ForeignKeyViolation] {
        var found: [RecoveryReport.ForeignKeyViolation] = []
        do {
            try target.forEachRow("PRAGMA foreign_key_check") { row in
                found.append(
                    .init(
                        table: try row[0], rowID: try row[1] as Int64?, parent: try row[2],
                        constraintIndex: try row[3]))
            }
        } catch {
            logger.error("foreign_key_check after salvage failed: \(error)")
            found.append(.init(table: "", rowID: nil, parent: "", constraintIndex: -1))
        }
        return found
    }

    private func copyTable(
        _ table: String, from source: SQLiteConnection, to target: SQLiteConnection
    ) -> RecoveryReport.SalvagedTable {
        var result = RecoveryReport.SalvagedTable(table: table, rowsCopied: 0, rowsRefused: 0, problem: nil)
        do {
            // SQLite's names are case-insensitive: a table declared `Outbox` and created as `outbox` is the same.
            guard
                let sourceTable = try source.fetchOne(
                    String.self,
                    "SELECT name FROM sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE", [table])
            else {
                result.problem = "not found in the old file; nothing copied"
                return result
            }
            let wanted = try target.columnNames(of: table)
            let available = Set(try source.columnNames(of: sourceTable).map { $0.lowercased() })
            let columns = wanted.filter { available.contains($0.lowercased()) }
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
                let quotedSource = "\"\(sourceTable.replacingOccurrences(of: "\"", with: "\"\""))\""
                try source.forEachRow("SELECT \(list) FROM \(quotedSource)") { row in
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
        // NOMUTEX: `SQLiteDatabase` serializes every use behind its own lock.
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
    ///
    /// The database goes first, then its companions. A crash in between leaves a `-wal` without a database,
    /// which the next open sets aside (``setAsideOrphanedCompanions(_:)``) before SQLite could apply it to a
    /// fresh file. A companion that cannot be renamed is never deleted (a WAL may hold commits not yet in the
    /// database): everything moved so far is put back and the error thrown. Only the `-shm`, an index SQLite
    /// rebuilds from the WAL, may be removed instead.
    static func moveAside(_ path: String, date: Date) throws -> String {
        let target = uniqueName("\(path).corrupt-\(timestamp(date))")
        guard rename(path, target) == 0 else {
            throw StoreError(
                .cannotOpen, message: "cannot move \(path) aside: \(String(cString: strerror(errno)))")
        }
        var moved = [""]
        for suffix in ["-wal", "-journal"] where FileManager.default.fileExists(atPath: path + suffix) {
            guard rename(path + suffix, target + suffix) == 0 else {
                let failure = String(cString: strerror(errno))
                for done in moved.reversed() { _ = rename(target + done, path + done) }
                throw StoreError(.io, message: "cannot move \(path + suffix) aside (\(failure)); nothing was moved")
            }
            moved.append(suffix)
        }
        if FileManager.default.fileExists(atPath: path + "-shm"), rename(path + "-shm", target + "-shm") != 0 {
            _ = unlink(path + "-shm")
        }
        return target
    }

    /// `base`, or `base-2`, `base-3`… whichever does not exist yet.
    static func uniqueName(_ base: String) -> String {
        var target = base
        var counter = 1
        while FileManager.default.fileExists(atPath: target) || FileManager.default.fileExists(atPath: target + "-wal")
        {
            counter += 1
            target = "\(base)-\(counter)"
        }
        return target
    }

    /// `yyyyMMddTHHmmssZ` in UTC, for the names of moved-aside files.
    static func timestamp(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        return formatter.string(from: date)
    }
}

private func posixOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
    open(path, flags, mode)
}

private func closeDescriptor(_ descriptor: Int32) -> Int32 {
    close(descriptor)
}
