import Dispatch

/// A `SQLiteExecutor` runs an actor's jobs on a store's own serial queue, the one its async `read`/`write`
/// use, so an engine actor that adopts it calls the store synchronously without ever blocking a thread of
/// Swift's cooperative pool.
///
/// For example:
///
/// ```swift
/// actor Engine {
///     let database: Database
///     nonisolated var unownedExecutor: UnownedSerialExecutor { database.executor.asUnownedSerialExecutor() }
///     func save() throws { try database.write { try $0.execute("…") } }  // runs on the store's queue
/// }
/// ```
///
/// Jobs run one at a time in the order they were enqueued, interleaved with the store's async accesses.
public final class SQLiteExecutor: SerialExecutor, Sendable {
    private let queue: DispatchQueue

    init(queue: DispatchQueue) {
        self.queue = queue
    }

    /// An executor over a serial queue of its own, for an actor whose store (if any) has none: its jobs then
    /// run off the cooperative pool all the same.
    public convenience init(label: String) {
        self.init(queue: DispatchQueue(label: label))
    }

    /// Runs `job` on the store's queue.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }

    /// This executor, unowned, for an actor's `unownedExecutor`.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }
}
