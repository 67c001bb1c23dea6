import CSQLite
import Dispatch

extension SQLiteDatabase {
    /// Opens the store like ``init(path:schema:configuration:)``, on a dispatch queue rather than the caller's
    /// thread: opening reads every page (`quick_check`), runs migrations and may wait for another process's
    /// lock, none of which may block a thread of Swift's cooperative pool.
    ///
    /// - Throws: as ``init(path:schema:configuration:)``; `CancellationError` when cancelled before it starts.
    public static func open(
        path: String, schema: SQLiteSchema, configuration: Configuration = Configuration()
    ) async throws -> SQLiteDatabase {
        try Task.checkCancellation()
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue(label: "tidings.store.open").async {
                continuation.resume(
                    with: Result { try SQLiteDatabase(path: path, schema: schema, configuration: configuration) })
            }
        }
    }

    /// Runs `body` in a write transaction on the store's own serial queue, and suspends the caller until it is
    /// done; see ``write(_:)`` for the transaction's guarantees.
    ///
    /// SQLite can wait — for another process's lock (up to the busy timeout), for the disk on a large write —
    /// and a wait on Swift's cooperative pool stalls every task sharing its few threads. This runs the work on
    /// the store's dispatch queue instead (as GRDB's `DatabaseWriter.write` does), so actors and tasks call it
    /// with `await` and their thread is free meanwhile.
    ///
    /// While the store is suspended (``suspend()-8l8d6``), it waits for ``resume()-600f7`` in the task, holding no thread,
    /// or throws ``StoreError/suspended``, as ``Configuration/whenSuspended`` says.
    ///
    /// - Returns: What `body` returns.
    /// - Throws: `CancellationError` when the task is cancelled before the work starts, or while it waits for
    ///   ``resume()-600f7`` (once it started it runs to its end: a half-run transaction is rolled back, never
    ///   half-applied); otherwise as ``write(_:)``.
    public func write<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
        try await onQueue { try self.write(whenSuspended: $0, body) }
    }

    /// Runs `body` in a read transaction on the store's own serial queue; see ``read(_:)`` and
    /// ``write(_:)-9fkeh`` for why.
    ///
    /// - Throws: `CancellationError` when cancelled before the work starts; otherwise as ``read(_:)``.
    public func read<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
        try await onQueue { try self.read(whenSuspended: $0, body) }
    }

    /// Checkpoints the WAL into the database file and truncates the `-wal` to zero bytes, when no reader
    /// needs it; run on the store's queue. SQLite checkpoints on its own as the WAL grows (see
    /// ``Configuration/walSizeLimit``); this is for moments the app chooses, such as going to the background.
    ///
    /// - Returns: Whether the checkpoint completed (`false` when another connection was reading or writing).
    /// - Throws: ``StoreError`` from SQLite other than contention.
    @discardableResult
    public func checkpoint() async throws -> Bool {
        try await onQueue {
            try self.writeWithoutTransaction(whenSuspended: $0) { db in
                var logFrames: Int32 = 0
                var checkpointed: Int32 = 0
                let code = sqlite3_wal_checkpoint_v2(
                    db.handle, nil, SQLITE_CHECKPOINT_TRUNCATE, &logFrames, &checkpointed)
                if code == SQLITE_BUSY || code == SQLITE_LOCKED { return false }
                guard code == SQLITE_OK else { throw StoreError.fromSQLite(code, connection: db.handle) }
                return true
            }
        }
    }

    /// Runs `work` on the store's queue. A suspended store makes it throw `SuspendedBeforeStart` there, and the
    /// task then waits for ``resume()-600f7`` (or fails, as configured) and tries again: the queue never waits, so the
    /// accesses and executor jobs behind it are not held up.
    private func onQueue<T: Sendable>(_ work: @escaping @Sendable (SuspendedMode) throws -> T) async throws -> T {
        while true {
            try Task.checkCancellation()
            do {
                return try await withCheckedThrowingContinuation { continuation in
                    queue.async { continuation.resume(with: Result { try work(.report) }) }
                }
            } catch is SuspendedBeforeStart {
                guard configuration.whenSuspended == .wait else {
                    throw StoreError(.suspended, message: "the store at \(path) is suspended")
                }
                try await awaitResume()
            }
        }
    }
}
