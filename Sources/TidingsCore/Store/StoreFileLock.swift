#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The advisory lock every open store holds on `<name>.lock` beside its file.
///
/// SQLite's own locks last only as long as a transaction, so they cannot tell whether another connection
/// still has the file open. Every `SQLiteDatabase` holds this lock shared for as long as it is open; replacing the
/// file needs it exclusively, so a file another connection (another process, or another `SQLiteDatabase` in this
/// one) has open is never moved aside under it. `flock` locks belong to the open file description, so two
/// stores in one process conflict just as two processes do, and the kernel drops the lock when a process dies.
///
/// Every call is non-blocking: a lock that cannot be had now is reported, never waited for.
// @unchecked: `descriptor` changes only in init, deinit and `release()`, which `SQLiteDatabase` calls under its lock.
final class StoreFileLock: @unchecked Sendable {
    /// The lock file's path.
    let path: String
    private var descriptor: Int32

    /// Opens (creating with mode 0600) `<databasePath>.lock` and takes the shared lock.
    ///
    /// - Throws: ``StoreError/cannotOpen`` when the lock file cannot be opened; ``StoreError/busy`` when
    ///   another connection holds it exclusively (it is replacing the file right now).
    init(databasePath: String) throws {
        path = databasePath + ".lock"
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw StoreError(.cannotOpen, message: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(descriptor, LOCK_SH | LOCK_NB) == 0 else {
            let failure = errno
            _ = close(descriptor)
            descriptor = -1
            throw Self.error(failure, path: databasePath, doing: "open")
        }
    }

    deinit { release() }

    /// Takes the lock exclusively, which succeeds only when no other connection has the store open.
    ///
    /// `flock` may drop the shared lock before taking the exclusive one; on failure the shared lock is taken
    /// again (it cannot be refused then, since nobody holds it exclusively).
    ///
    /// A lock held for a moment is retried for up to `patience` (``SQLiteDatabase/Configuration/lockPatience``): a
    /// child process that this process spawns shares every open file description until its `exec` closes them
    /// (`O_CLOEXEC` acts only then), so for that instant it holds our shared lock too. Like the rest of the synchronous open, the retry waits on
    /// the caller's thread; `SQLiteDatabase.open` runs it off the cooperative pool.
    ///
    /// - Throws: ``StoreError/busy`` naming the file when another connection has it open.
    func lockExclusively(databasePath: String, patience: Duration) throws {
        let attempts = max(1, Int(patience / Self.retryInterval))
        for attempt in 1...attempts {
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return }
            let failure = errno
            _ = flock(descriptor, LOCK_SH | LOCK_NB)
            guard attempt < attempts, failure == EWOULDBLOCK || failure == EAGAIN else {
                throw Self.error(failure, path: databasePath, doing: "replace")
            }
            var pause = timespec(tv_sec: 0, tv_nsec: Int(Self.retryInterval.components.attoseconds / 1_000_000_000))
            _ = nanosleep(&pause, nil)
        }
    }

    private static let retryInterval = Duration.milliseconds(10)

    /// Goes back to the shared lock after replacing the file.
    func lockShared() {
        // Downgrading an exclusive lock we hold cannot conflict with anyone.
        _ = flock(descriptor, LOCK_SH | LOCK_NB)
    }

    /// Drops the lock and closes the lock file; the file itself stays (removing it would race with openers).
    func release() {
        guard descriptor >= 0 else { return }
        _ = close(descriptor)
        descriptor = -1
    }

    private static func error(_ failure: Int32, path: String, doing: String) -> StoreError {
        if failure == EWOULDBLOCK || failure == EAGAIN {
            let message =
                doing == "replace"
                ? "the store at \(path) needs replacing but another connection has it open; it was left alone"
                : "the store at \(path) is being replaced by another connection"
            return StoreError(.busy, message: message)
        }
        return StoreError(.io, message: "cannot lock \(path): \(String(cString: strerror(failure)))")
    }
}
