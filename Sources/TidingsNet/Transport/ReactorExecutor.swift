#if os(Linux)
    import Dispatch
    import Glibc
    import TidingsCore

    /// A task executor whose jobs run on an ``EpollReactor``'s own thread, between two `epoll_wait`s.
    ///
    /// A connection's reader task prefers it (`Task(executorPreference:)`): the reactor that sees a
    /// socket become readable resumes the waiting reader and runs it at once, on the same thread,
    /// instead of handing it to the cooperative pool and waking a pool thread for every read. Jobs
    /// must only do short, non-blocking work (a system call that cannot wait, decoding, handing
    /// results on); they suspend rather than wait, as every task must.
    ///
    /// Should the reactor stop (its `epoll_wait` failed), jobs run on a global dispatch queue instead,
    /// so a task that prefers this executor can never be stranded.
    final class ReactorExecutor: TaskExecutor, Sendable {
        private struct State {
            var jobs: [UnownedJob] = []
            /// The reactor is in (or about to enter) an `epoll_wait` without a timeout: a new job must
            /// wake it through the event descriptor.
            var sleeping = false
            /// The reactor no longer runs jobs.
            var stopped = false
            /// The thread that runs the jobs, once the reactor started.
            var thread: pthread_t?
        }

        private let state = LockedState(State())
        /// The read end of a pipe the reactor watches; -1 when no pipe could be made.
        let wakeDescriptor: Int32
        /// The write end: one byte written wakes the reactor for a job.
        private let wakeWriter: Int32

        init() {
            var ends: [Int32] = [-1, -1]
            if pipe(&ends) == 0, configureSocket(ends[0]) == 0, configureSocket(ends[1]) == 0 {
                wakeDescriptor = ends[0]
                wakeWriter = ends[1]
            } else {
                for end in ends where end >= 0 { _ = systemClose(end) }
                wakeDescriptor = -1
                wakeWriter = -1
                // Without a way to wake the reactor its thread cannot be relied on: run jobs elsewhere.
                state.withLock { $0.stopped = true }
            }
        }

        /// Queues `job` for the reactor's thread, waking the reactor only when it sleeps; after the
        /// reactor stopped, runs it on a global queue instead.
        func enqueue(_ job: consuming ExecutorJob) {
            let unowned = UnownedJob(job)
            enum Action { case none, wake, runElsewhere }
            let action = state.withLock { state -> Action in
                guard !state.stopped else { return .runElsewhere }
                state.jobs.append(unowned)
                guard state.sleeping else { return .none }
                state.sleeping = false
                return .wake
            }
            switch action {
            case .none: break
            case .wake:
                // A full pipe already holds a wake-up, so a failed write loses nothing.
                var byte: UInt8 = 1
                _ = write(wakeWriter, &byte, 1)
            case .runElsewhere:
                let executor = asUnownedTaskExecutor()
                DispatchQueue.global().async { unowned.runSynchronously(on: executor) }
            }
        }

        /// Wakes the reactor if it sleeps, so that it looks again at its read deadlines.
        func wakeIfSleeping() {
            let wake = state.withLock { state -> Bool in
                guard state.sleeping, !state.stopped else { return false }
                state.sleeping = false
                return true
            }
            guard wake else { return }
            var byte: UInt8 = 1
            _ = write(wakeWriter, &byte, 1)
        }

        /// Whether the caller runs on the reactor's thread (for tests: the thread's OS name is inherited
        /// from whoever started the reactor, so it cannot tell).
        var isCurrentThread: Bool {
            state.withLock { state in state.thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
        }

        /// Called once by the reactor's thread before its first wait.
        func reactorStarted() {
            state.withLock { $0.thread = pthread_self() }
        }

        /// Called by the reactor before it waits: the `epoll_wait` timeout to use, 0 while jobs are
        /// queued, else -1 (and from then on a new job writes to ``wakeDescriptor``).
        func waitTimeout() -> Int32 {
            state.withLock { state in
                guard state.jobs.isEmpty else { return 0 }
                state.sleeping = true
                return -1
            }
        }

        /// Called by the reactor after its wait returned, and for the wake-up event.
        func awake() {
            state.withLock { $0.sleeping = false }
        }

        /// Consumes the wake-ups written so far (the pipe is non-blocking: this never waits).
        func drainWakeDescriptor() {
            var bytes = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
            while withUnsafeMutableBytes(of: &bytes, { read(wakeDescriptor, $0.baseAddress, $0.count) }) == 32 {}
        }

        /// Runs the jobs queued so far (jobs they queue wait for the next round, after the reactor has
        /// looked at its descriptors again).
        func runQueuedJobs() {
            let jobs = state.withLock { state -> [UnownedJob] in
                defer { state.jobs.removeAll(keepingCapacity: true) }
                return state.jobs
            }
            guard !jobs.isEmpty else { return }
            let executor = asUnownedTaskExecutor()
            for job in jobs { job.runSynchronously(on: executor) }
        }

        /// The reactor stopped: queued and later jobs run on a global dispatch queue.
        func stop() {
            let jobs = state.withLock { state -> [UnownedJob] in
                state.stopped = true
                defer { state.jobs = [] }
                return state.jobs
            }
            let executor = asUnownedTaskExecutor()
            for job in jobs { DispatchQueue.global().async { job.runSynchronously(on: executor) } }
        }
    }
#endif

/// A stream whose readiness may come from an epoll reactor, so its reader can run on that reactor's
/// thread (``ReactorExecutor``): plain TCP, and TLS over it.
///
/// A TLS reader on the reactor decrypts at most `TLSConnection.readChunkSize` of plaintext per job
/// (as a TCP reader decodes at most that much per read), so one job holds the reactor for tens of
/// microseconds to about a millisecond (a 64 KiB run of tiny records); on the pool it cost a second
/// thread wake-up per read (docs/BENCHMARKS.md, "WS9 (issue 8), wsperf branch").
protocol ReactorDrivenStream {
    #if os(Linux)
        /// The executor of the reactor that reports this stream's readiness, if one does.
        var reactorExecutor: ReactorExecutor? { get }
    #endif
}

#if os(Linux)
    extension TCPConnection: ReactorDrivenStream {
        var reactorExecutor: ReactorExecutor? { channel.reactor.executor }
    }
#endif

/// Starts a task that reads `stream` in a loop: on the thread of the reactor that reports the stream's
/// readiness where there is one (Linux), so a read that becomes possible runs without a hand-off to the
/// cooperative pool; elsewhere an ordinary task.
func startReaderTask(
    for stream: any ByteStream, _ body: sending @escaping @isolated(any) () async -> Void
) -> Task<Void, Never> {
    #if os(Linux)
        if let executor = (stream as? any ReactorDrivenStream)?.reactorExecutor {
            return Task(executorPreference: executor, operation: body)
        }
    #endif
    return Task(operation: body)
}
