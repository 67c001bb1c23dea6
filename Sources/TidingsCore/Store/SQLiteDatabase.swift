import CSQLite
import Foundation

/// A `SQLiteDatabase` is an open SQLite store: one connection, used by one caller at a time.
///
/// Opening configures WAL journaling, `synchronous=NORMAL`, a busy timeout and foreign keys, checks the file
/// (`PRAGMA quick_check`), and runs the schema's migrations. A file that is not a database, is damaged, has a
/// schema newer than the code, or cannot take the migrations is moved aside and replaced by a fresh store
/// into which the readable durable tables are copied; ``openReport`` says what happened.
///
/// Every access goes through ``write(_:)-1t7wp``, ``read(_:)-63imq`` or ``writeWithoutTransaction(_:)``, which serialize
/// callers (any thread, any task) behind one lock, so a `SQLiteDatabase` can be shared freely. Those run on the
/// caller's thread; from Swift's cooperative pool (actors, tasks) use the `async` `write`/`read`, which run
/// the same work on the store's own serial queue, since SQLite may wait (busy timeout, disk).
///
/// For example:
///
/// ```swift
/// let database = try Database(path: url.path, schema: schema)
/// try database.write { db in
///     try db.execute("INSERT INTO outbox(id, payload) VALUES (?, ?)", [id, payload])
/// }
/// let count = try database.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM outbox") ?? 0 }
/// ```
///
/// Files are created with mode 0600; SQLite gives its `-wal`, `-shm` and `-journal` files the same mode.
///
/// ## Recovery policy
///
/// - The file is **replaced** when SQLite says it is not a database or is corrupt, when `quick_check` fails,
///   when its `user_version` is newer than the schema's, or when a migration step fails on its data but
///   succeeds on an empty store (so replacing helps). The old file and its `-wal`/`-shm` are renamed to
///   `<name>.corrupt-<yyyyMMddTHHmmssZ>`, never deleted.
/// - A too-new file is always moved aside, then every durable table is copied into the fresh store, column by
///   column where names match; ``RecoveryReport/keptAllDurableData`` says whether every row made it, so the
///   app can tell the person when something stayed behind in the moved-aside file.
/// - Durable tables are copied row by row from the old file (read-only), keeping every row read before damage
///   stops a scan; rows the new schema refuses are counted. Disposable tables start empty.
/// - The file is **not** touched on a wrong key or a damaged key check (``StoreError/damagedKeyCheck``), a lock
///   held elsewhere (`busy`), I/O or disk-full errors, contention or out-of-memory during `quick_check`, or a
///   migration that fails even on an empty store (a bug in it): those throw.
/// - A file is replaced only when no other connection (another process, or another `SQLiteDatabase` here) has it
///   open: every open store holds a shared `flock` on `<name>.lock` (except while suspended), and replacing
///   needs it exclusively; otherwise opening throws ``StoreError/busy`` and the file stays.
/// - Two processes may open and migrate a file at once: migrations read `user_version` again inside their
///   write transaction, so the second sees the first one's work.
/// - After salvage, `PRAGMA foreign_key_check` runs; ``RecoveryReport/foreignKeyViolations`` lists its findings.
///
/// ## Suspension
///
/// A store shared by an app and its extensions in an App Group container must hold no file lock while its
/// process is suspended, or iOS terminates the process (`0xdead10cc`). ``suspend()-8l8d6`` closes the connection and
/// lets go of the `.lock`; ``resume()-600f7`` opens them again. See <doc:SharingAStore>.
// @unchecked: not a value box — the SQLite handle and its flags are reached only under `lock`, a recursive lock
// (so `isAccessing` can catch a closure re-entering on its own thread), or on `queue` which takes it too.
public final class SQLiteDatabase: @unchecked Sendable {
    /// How a store is opened.
    public struct Configuration: Sendable {
        /// How long a statement waits for another process's lock before failing with ``StoreError/busy``.
        public var busyTimeout: Duration
        /// The source of "now" for naming moved-aside files and stamping reports.
        public var now: @Sendable () -> Date
        /// Where recovery and migration notices go.
        public var logger: TidingsLogger
        /// The cipher for encrypted values; when set, opening checks the key (``StoreError/wrongKey``).
        public var cipher: ValueCipher?
        /// Whether opening runs `PRAGMA quick_check` (on by default). It reads every page, so its cost grows
        /// with the file; an app with a large store may turn it off for most launches. Damage SQLite meets
        /// while opening is still recovered from either way.
        public var checksIntegrityOnOpen: Bool
        /// The size in bytes the `-wal` file is brought back to after a checkpoint (`journal_size_limit`), and
        /// the amount of new WAL after which SQLite checkpoints on its own (`wal_autocheckpoint`). Without it a
        /// long-running app's WAL keeps the size of its busiest moment forever. 4 MiB by default; at least one
        /// page.
        public var walSizeLimit: Int
        /// How long replacing a damaged or too-new file waits for other holders of the store's lock to let go
        /// before it fails with ``StoreError/busy``. A child process this process spawns holds the lock for the
        /// instant between its `fork` and `exec`; a connection that really has the file open holds it longer.
        /// 250 ms by default.
        public var lockPatience: Duration
        /// Opens an existing file for reading only (`tidings kecalek show`): no file is created, migrated, moved,
        /// replaced or locked, and every damage, a wrong key, or a schema other than `schema`'s version throws
        /// instead of being recovered from. Writes then fail with ``StoreError/readOnly``. Off by default.
        public var readOnly: Bool

        /// What an access asked for while the store is suspended does: wait for ``SQLiteDatabase/resume()-600f7``, or
        /// fail at once with ``StoreError/suspended`` (the default, as GRDB's suspended databases do: a
        /// synchronous access that waited on the thread which will call `resume()` would never end).
        public var whenSuspended: SuspendedAccess
        /// Whether the store suspends and resumes itself when `Notification.Name.tidingsStoreSuspend`
        /// and `Notification.Name.tidingsStoreResume` are posted (off by default), so an app posts
        /// them once from its lifecycle instead of calling every store.
        public var observesSuspensionNotifications: Bool

        /// Test seam: called before each `PRAGMA quick_check` run with its attempt number (from 1); a result
        /// code it returns makes that run fail with it, as if SQLite had returned it.
        var quickCheckFault: (@Sendable (Int) -> Int32?)?
        /// Test seam: called when an access starts waiting for ``SQLiteDatabase/resume()-600f7``, and when
        /// ``SQLiteDatabase/suspend()-8l8d6`` starts waiting for an access in flight.
        var suspensionWait: (@Sendable (SuspensionWait) -> Void)?

        /// A configuration with a 5-second busy timeout, the system's wall time and no logging.
        public init(
            busyTimeout: Duration = .seconds(5), now: @escaping @Sendable () -> Date = { Date() },
            logger: TidingsLogger = .disabled, cipher: ValueCipher? = nil, checksIntegrityOnOpen: Bool = true,
            walSizeLimit: Int = 4 << 20, lockPatience: Duration = .milliseconds(250), readOnly: Bool = false,
            whenSuspended: SuspendedAccess = .fail, observesSuspensionNotifications: Bool = false
        ) {
            self.whenSuspended = whenSuspended
            self.observesSuspensionNotifications = observesSuspensionNotifications
            self.readOnly = readOnly
            self.walSizeLimit = walSizeLimit
            self.lockPatience = max(lockPatience, .zero)
            self.cipher = cipher
            self.checksIntegrityOnOpen = checksIntegrityOnOpen
            self.busyTimeout = busyTimeout
            self.now = now
            self.logger = logger
        }
    }

    /// What opening the store did.
    public struct OpenReport: Sendable {
        /// True when the file did not exist and was created.
        public var createdFile: Bool
        /// The `user_version` found in the file before migrating (0 for a new file), read inside the migration
        /// transaction: the schema's version when another process migrated first.
        public var migratedFrom: Int
        /// The `user_version` after migrating: the schema's version.
        public var migratedTo: Int
        /// Set when the file was moved aside and replaced; `nil` for a clean open.
        public var recovery: RecoveryReport?
    }

    /// The database file's path, or `":memory:"` for an in-memory store.
    public let path: String
    /// The schema the store was opened with.
    public let schema: SQLiteSchema
    /// What opening did: creation, migrations, and recovery if the file had to be replaced.
    public let openReport: OpenReport
    /// The configuration's cipher, for sealing and opening values of this store.
    public let cipher: ValueCipher?

    let logger: TidingsLogger
    /// Held for each access from its start to its end, and by ``suspend()-8l8d6``, ``resume()-600f7`` and ``close()``.
    private let lock = NSRecursiveLock()
    /// Set while a closure runs: the recursive lock lets its own thread in again, and this catches that.
    private var isAccessing = false
    /// Set by ``close()``; later accesses throw instead of touching a closed handle.
    private var isClosed = false
    /// `nil` while suspended (a file store) or closed.
    private var connection: SQLiteConnection?
    /// The shared advisory lock on `<path>.lock`, held while the store is open and not suspended (``StoreFileLock``).
    private var fileLock: StoreFileLock?
    /// Reopens the connection on ``resume()-600f7``.
    private let opener: SQLiteOpener
    let configuration: Configuration
    /// Whether the store is suspended, and the async accesses waiting for ``resume()-600f7``. Changed only under `lock`
    /// too, so an access that holds `lock` reads it steadily; a waiting access waits on this, never on `lock`.
    let suspension = NSCondition()
    /// Guarded by `suspension` (and changed under `lock` as well).
    var suspended = false
    /// Guarded by `suspension`: the async accesses waiting for ``resume()-600f7``.
    var resumeWaiters: [UUID: CheckedContinuation<Void, any Error>] = [:]
    /// The tokens of the notification observers (``Configuration/observesSuspensionNotifications``).
    private var observers: [any NSObjectProtocol] = []
    /// Where the async accessors run SQLite work: off Swift's cooperative pool, one job at a time.
    let queue: DispatchQueue
    /// An executor over the store's queue, for an engine actor that calls the store synchronously
    /// (``SQLiteExecutor``).
    public let executor: SQLiteExecutor
    /// Set on ``queue``, so tests can tell the work ran there.
    static let queueKey = DispatchSpecificKey<Bool>()

    /// Opens (creating if needed) the store at `path`, migrating it to `schema`.
    ///
    /// - Parameters:
    ///   - path: A file path in an existing directory, or `":memory:"`.
    ///   - schema: The tables and migrations.
    ///   - configuration: Busy timeout, clock and logger.
    /// - Throws: ``StoreError/cannotOpen`` (missing directory, permissions), ``StoreError/busy`` (another
    ///   process holds the file), ``StoreError/migrationFailed`` when the migrations fail even on an empty
    ///   store (a bug in them), ``StoreError/wrongKey`` when the configuration's cipher is not the store's key
    ///   and ``StoreError/damagedKeyCheck`` when it is but the key-check record is damaged (the file is left
    ///   alone either way), ``StoreError/misuse`` for an invalid schema or an undeclared table, and other
    ///   ``StoreError``s from SQLite. Corruption, a non-database file and a too-new schema do not throw: they
    ///   are recovered from and reported in ``openReport``.
    public init(path: String, schema: SQLiteSchema, configuration: Configuration = Configuration()) throws {
        try schema.validate()
        let opener = SQLiteOpener(path: path, schema: schema, configuration: configuration)
        let (handle, report, fileLock) = try opener.open()
        self.opener = opener
        self.configuration = configuration
        self.fileLock = fileLock
        self.queue = DispatchQueue(label: "tidings.store")
        queue.setSpecific(key: Self.queueKey, value: true)
        self.executor = SQLiteExecutor(queue: queue)
        self.path = path
        self.schema = schema
        self.openReport = report
        self.logger = configuration.logger.scoped("store")
        self.cipher = configuration.cipher
        self.connection = SQLiteConnection(handle: handle)
        if configuration.observesSuspensionNotifications { observers = observeSuspensionNotifications() }
    }

    /// Opens a private in-memory store with `schema`; it disappears when the `SQLiteDatabase` is released.
    ///
    /// - Throws: as ``init(path:schema:configuration:)``.
    public static func inMemory(schema: SQLiteSchema, configuration: Configuration = Configuration()) throws
        -> SQLiteDatabase
    {
        try SQLiteDatabase(path: ":memory:", schema: schema, configuration: configuration)
    }

    deinit {
        for observer in observers { NotificationCenter.default.removeObserver(observer) }
        if let connection {
            connection.finalizeStatements()
            sqlite3_close_v2(connection.handle)
        }
        // After the connection: the lock promises that no connection of this store has the file open.
        fileLock?.release()
    }

    /// Closes the store now rather than when the last reference goes; later accesses throw
    /// ``StoreError/misuse``. Closing twice does nothing.
    ///
    /// Closing the last connection checkpoints the WAL into the database file and removes the `-wal` file.
    public func close() {
        lock.lock()
        defer { lock.unlock() }
        guard !isClosed, !isAccessing else { return }
        isClosed = true
        for observer in observers { NotificationCenter.default.removeObserver(observer) }
        observers = []
        if let connection {
            connection.finalizeStatements()
            sqlite3_close_v2(connection.handle)
        }
        connection = nil
        fileLock?.release()
        fileLock = nil
        // Accesses waiting for `resume()` go on, and find the store closed.
        openGate()
    }

    /// Deletes a closed store's files: the database and its `-wal`, `-shm`, `-journal` and `.lock` (e.g. when
    /// an account is removed). Missing files are not an error.
    ///
    /// - Warning: Close every `SQLiteDatabase` on `path` first; SQLite cannot protect a file deleted under it.
    /// - Throws: ``StoreError/io`` naming the file that could not be removed.
    public static func removeFiles(at path: String) throws {
        for file in [path, path + "-wal", path + "-shm", path + "-journal", path + ".lock"] {
            guard FileManager.default.fileExists(atPath: file) else { continue }
            do { try FileManager.default.removeItem(atPath: file) } catch {
                throw StoreError(.io, message: "cannot remove \(file): \(error.localizedDescription)")
            }
        }
    }

    // MARK: Access

    /// Runs `body` in a write transaction (`BEGIN IMMEDIATE`) and commits it when `body` returns.
    ///
    /// If `body` throws, every change it made is rolled back and the error is rethrown. When `write` returns,
    /// the transaction is committed (durable against a process crash; with `synchronous=NORMAL` the last
    /// commits may be lost on power failure, never half-applied).
    ///
    /// - Returns: What `body` returns.
    /// - Throws: Whatever `body` throws; ``StoreError/busy`` when the write lock cannot be taken in the busy
    ///   timeout; ``StoreError/misuse`` when called from inside another access on the same thread; other
    ///   ``StoreError``s from `COMMIT`, after which the transaction is rolled back.
    public func write<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try write(whenSuspended: configuration.whenSuspended.mode, body)
    }

    func write<T>(whenSuspended mode: SuspendedMode, _ body: (SQLiteConnection) throws -> T) throws -> T {
        try withConnection(whenSuspended: mode) { db throws -> T in try transaction(db, begin: "BEGIN IMMEDIATE", body)
        }
    }

    /// Runs `body` in a read transaction: it sees one consistent snapshot, and any statement that would
    /// write is refused with ``StoreError/readOnly`` before it runs.
    ///
    /// - Returns: What `body` returns.
    /// - Throws: Whatever `body` throws; ``StoreError/misuse`` on re-entrance; ``StoreError``s from SQLite.
    public func read<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try read(whenSuspended: configuration.whenSuspended.mode, body)
    }

    func read<T>(whenSuspended mode: SuspendedMode, _ body: (SQLiteConnection) throws -> T) throws -> T {
        try withConnection(whenSuspended: mode) { db throws -> T in
            db.allowsWrites = false
            defer { db.allowsWrites = true }
            return try transaction(db, begin: "BEGIN DEFERRED", body)
        }
    }

    /// Runs `body` with no surrounding transaction: each statement commits on its own (autocommit).
    ///
    /// Use it for statements that cannot run in a transaction (`VACUUM`), or for single-statement writes
    /// where one transaction each is wanted. `body` may open its own transactions with `BEGIN`/`COMMIT`; one
    /// still open when `body` ends (returning or throwing) is rolled back.
    ///
    /// - Throws: Whatever `body` throws; ``StoreError/misuse`` on re-entrance.
    public func writeWithoutTransaction<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try writeWithoutTransaction(whenSuspended: configuration.whenSuspended.mode, body)
    }

    func writeWithoutTransaction<T>(whenSuspended mode: SuspendedMode, _ body: (SQLiteConnection) throws -> T)
        throws -> T
    {
        try withConnection(whenSuspended: mode) { db in
            defer { if db.isInTransaction { rollback(db) } }
            return try body(db)
        }
    }

    private func withConnection<T>(whenSuspended mode: SuspendedMode, _ body: (SQLiteConnection) throws -> T)
        throws -> T
    {
        lock.lock()
        defer { lock.unlock() }
        guard !isAccessing else {
            throw StoreError.misuse("re-entrant access: use the connection you already have")
        }
        while true {
            guard !isClosed else { throw StoreError.misuse("the store at \(path) is closed") }
            guard isSuspended else { break }
            switch mode {
            case .fail: throw StoreError(.suspended, message: "the store at \(path) is suspended")
            case .report: throw SuspendedBeforeStart()
            case .wait:
                // Let go of `lock` so that `resume()` can take it; the store is checked again once it is back.
                lock.unlock()
                waitUntilResumed()
                lock.lock()
            }
        }
        guard let connection else { throw StoreError.misuse("the store at \(path) has no connection") }
        isAccessing = true
        defer { isAccessing = false }
        return try body(connection)
    }

    // MARK: Suspension state

    /// Whether the store is suspended: ``suspend()-8l8d6`` was called and ``resume()-600f7`` has not succeeded since.
    public var isSuspended: Bool {
        suspension.lock()
        defer { suspension.unlock() }
        return suspended
    }

    /// Blocks the calling thread until the store is resumed or closed.
    private func waitUntilResumed() {
        configuration.suspensionWait?(.access)
        suspension.lock()
        while suspended { suspension.wait() }
        suspension.unlock()
    }

    /// Marks the store resumed and wakes every access waiting for it, synchronous and async.
    private func openGate() {
        suspension.lock()
        suspended = false
        let waiters = resumeWaiters
        resumeWaiters = [:]
        suspension.broadcast()
        suspension.unlock()
        for waiter in waiters.values { waiter.resume() }
    }

    /// Waits for an access in flight on another thread, then closes the connection and lets go of the `.lock`;
    /// see ``suspend()-8l8d6``.
    func suspendNow() throws {
        if !lock.try() {
            configuration.suspensionWait?(.suspend)
            lock.lock()
        }
        defer { lock.unlock() }
        guard !isAccessing else {
            throw StoreError.misuse("suspend() inside an access of the same store would wait for itself")
        }
        guard !isClosed, !isSuspended else { return }
        suspension.lock()
        suspended = true
        suspension.unlock()
        // An in-memory store has no file to hold a lock on, and closing would lose it: it only stops accesses.
        guard !opener.isInMemory, let open = connection else { return }
        connection = nil
        open.finalizeStatements()
        // Closing the last connection of the file checkpoints the WAL into it; with another process's connection
        // still open, that one does it later.
        sqlite3_close_v2(open.handle)
        fileLock?.release()
        fileLock = nil
        logger.debug("suspended: connection closed, lock released")
    }

    /// Takes the `.lock` and opens the connection again, then lets waiting accesses go; see ``resume()-600f7``.
    func resumeNow() throws {
        lock.lock()
        defer { lock.unlock() }
        guard !isClosed, isSuspended else { return }
        if !opener.isInMemory, connection == nil {
            // A read-only store holds no `.lock` (it never replaces the file).
            let newLock = configuration.readOnly ? nil : try StoreFileLock(databasePath: path)
            do {
                connection = SQLiteConnection(handle: try opener.reopen())
            } catch {
                newLock?.release()
                throw error
            }
            fileLock = newLock
        }
        openGate()
        logger.debug("resumed")
    }

    /// Runs `body` between `begin` and `COMMIT`, rolling back when either throws.
    private func transaction<T>(_ db: SQLiteConnection, begin: String, _ body: (SQLiteConnection) throws -> T)
        throws -> T
    {
        try db.execute(begin)
        let value: T
        do {
            value = try body(db)
            try db.execute("COMMIT")
        } catch {
            rollback(db)
            throw error
        }
        return value
    }

    private func rollback(_ db: SQLiteConnection) {
        // SQLite may already have rolled back on its own (SQLITE_FULL, SQLITE_IOERR); then there is nothing to do.
        guard db.isInTransaction else { return }
        do { try db.execute("ROLLBACK") } catch {
            logger.error("rollback failed: \(error)")
        }
    }

}
