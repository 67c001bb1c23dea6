import Dispatch
import Foundation

extension SQLiteDatabase {
    /// What an access (read or write) asked for while the store is suspended does.
    public enum SuspendedAccess: Sendable, Equatable {
        /// It waits for ``SQLiteDatabase/resume()-600f7`` and then runs: an async access suspends its task, holding
        /// no thread; a synchronous one blocks its own thread.
        case wait
        /// It throws ``StoreError/suspended`` at once, before its closure runs.
        case fail

        var mode: SuspendedMode {
            switch self {
            case .wait: .wait
            case .fail: .fail
            }
        }
    }

    /// How one access meets a suspended store: the configured ``SuspendedAccess``, or `report`, which the async
    /// accessors use on the store's queue so that waiting happens in the task rather than on the queue.
    enum SuspendedMode: Sendable {
        case wait, fail, report
    }

    /// Thrown in `report` mode before the closure runs: the async accessor then waits for ``resume()-600f7`` itself.
    struct SuspendedBeforeStart: Error {}

    /// Which wait the ``Configuration/suspensionWait`` test seam saw begin.
    enum SuspensionWait: Sendable, Equatable {
        /// An access found the store suspended and waits for ``resume()-600f7``.
        case access
        /// ``suspend()-8l8d6`` waits for an access in flight on another thread.
        case suspend
    }

    /// Suspends the store: waits for the access in flight, if any, to end (commit or roll back), then closes
    /// the SQLite connection and releases the `<name>.lock`, so that the process holds no lock on any of the
    /// store's files until ``resume()-600f7``.
    ///
    /// Call it when the process may be suspended with the store in an App Group container: the app entering the
    /// background, an app extension finishing its work. iOS terminates a suspended process that holds a file
    /// lock there (`0xdead10cc`), and in WAL mode an idle SQLite connection holds record locks on the database
    /// file and its `-shm`, so the connection is closed rather than only kept idle. Closing the last connection of the file checkpoints its
    /// WAL.
    ///
    /// While suspended, no access starts, read or write: the connection is closed, and opening the file for a
    /// read would take the locks this promises not to hold. An access asked for meanwhile waits for
    /// ``resume()-600f7`` or throws ``StoreError/suspended``, as ``Configuration/whenSuspended`` says. Another process
    /// may open, write and even replace the file meanwhile. An in-memory store keeps its connection (it has no
    /// file, and closing would lose it) and only stops accesses.
    ///
    /// Suspending a suspended or closed store does nothing; calls do not nest (one ``resume()-600f7`` resumes).
    ///
    /// For example:
    ///
    /// ```swift
    /// try database.suspend()   // e.g. from the app's didEnterBackground
    /// try database.resume()    // e.g. from willEnterForeground
    /// ```
    ///
    /// - Throws: ``StoreError/misuse`` when called inside an access of this store on the same thread (it would
    ///   wait for itself).
    /// - Warning: It waits on the calling thread for the access in flight, which may take up to the busy timeout;
    ///   from Swift's cooperative pool use ``suspend()-5u5xx``.
    public func suspend() throws {
        try suspendNow()
    }

    /// Resumes a suspended store: takes the `<name>.lock` and opens the connection again, then lets the accesses
    /// that waited go, in no particular order.
    ///
    /// Reopening configures the connection as opening did and checks the key and the schema version, without
    /// `quick_check`, migrations or recovery: what another process did meanwhile (its commits, or a damaged file
    /// it replaced with a fresh one) is simply seen. Resuming a store that is not suspended does nothing.
    ///
    /// - Throws: ``StoreError/busy`` when another connection is replacing the file right now,
    ///   ``StoreError/cannotOpen`` when the file is gone or went back to an older schema,
    ///   ``StoreError/schemaTooNew``, ``StoreError/wrongKey``, other ``StoreError``s from SQLite. The store then
    ///   stays suspended, and ``resume()-600f7`` may be called again.
    public func resume() throws {
        try resumeNow()
    }

    /// ``suspend()-8l8d6``, run on a dispatch queue of its own so that waiting for the access in flight blocks no
    /// thread of Swift's cooperative pool. When it returns, the store holds no lock.
    ///
    /// - Throws: as ``suspend()-8l8d6``.
    public func suspend() async throws {
        try await offThePool { try self.suspendNow() }
    }

    /// ``resume()-600f7``, run on a dispatch queue of its own: reopening reads the file, and may wait for another
    /// process's lock up to the busy timeout.
    ///
    /// - Throws: as ``resume()-600f7``.
    public func resume() async throws {
        try await offThePool { try self.resumeNow() }
    }

    /// Runs `work` on a fresh queue: never the store's own, where a synchronous access may be waiting for
    /// ``resume()-600f7`` (``SuspendedAccess/wait`` on an actor that runs on ``executor``).
    private func offThePool(_ work: @escaping @Sendable () throws -> Void) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            DispatchQueue(label: "tidings.store.suspension").async { continuation.resume(with: Result { try work() }) }
        }
    }

    /// Suspends the task until the store is resumed or closed (at once when it is neither suspended nor
    /// closed), holding no thread meanwhile.
    ///
    /// - Throws: `CancellationError` when the task is cancelled while it waits.
    func awaitResume() async throws {
        let id = UUID()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                suspension.lock()
                guard suspended, !Task.isCancelled else {
                    suspension.unlock()
                    continuation.resume(with: Task.isCancelled ? .failure(CancellationError()) : .success(()))
                    return
                }
                resumeWaiters[id] = continuation
                suspension.unlock()
                configuration.suspensionWait?(.access)
            }
        } onCancel: {
            suspension.lock()
            let waiter = resumeWaiters.removeValue(forKey: id)
            suspension.unlock()
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// Registers the observers of ``Configuration/observesSuspensionNotifications``. They hold the store weakly,
    /// and run on the posting thread, so that when `post` returns every observing store is suspended (or
    /// resumed); a failure is logged, since nobody could catch it.
    func observeSuspensionNotifications() -> [any NSObjectProtocol] {
        let center = NotificationCenter.default
        let suspend = center.addObserver(forName: .tidingsStoreSuspend, object: nil, queue: nil) { [weak self] _ in
            guard let self else { return }
            do { try self.suspendNow() } catch { self.logger.error("suspending on notification failed: \(error)") }
        }
        let resume = center.addObserver(forName: .tidingsStoreResume, object: nil, queue: nil) { [weak self] _ in
            guard let self else { return }
            do { try self.resumeNow() } catch { self.logger.error("resuming on notification failed: \(error)") }
        }
        return [suspend, resume]
    }
}

extension Notification.Name {
    /// Posted by an app to suspend every ``SQLiteDatabase`` opened with
    /// ``SQLiteDatabase/Configuration/observesSuspensionNotifications``, as ``SQLiteDatabase/suspend()-8l8d6`` does,
    /// before `post` returns (e.g. from `UIApplication.didEnterBackgroundNotification`): each waits on the
    /// posting thread for its access in flight, if any.
    public static let tidingsStoreSuspend = Notification.Name("TidingsStoreSuspendNotification")
    /// Posted by an app to resume every ``SQLiteDatabase`` opened with
    /// ``SQLiteDatabase/Configuration/observesSuspensionNotifications``, as ``SQLiteDatabase/resume()-600f7`` does,
    /// before `post` returns (e.g. from `UIApplication.willEnterForegroundNotification`). A store that fails to
    /// reopen logs why and stays suspended.
    public static let tidingsStoreResume = Notification.Name("TidingsStoreResumeNotification")
}
