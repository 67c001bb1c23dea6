import Foundation
import TidingsCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child process spawned with `posix_spawn` and reaped by a thread of its own, never by a run loop.
///
/// Guarantees:
/// - Nothing here blocks a thread of Swift's cooperative pool: the reaper (`waitid`/`waitpid`) and every
///   pipe read run on dedicated threads, and async callers resume through continuations.
/// - A signal is only ever sent to this child: the pid is marked gone before it is reaped, under the
///   same lock that ``signal(_:)`` takes, so a reused pid is never hit.
/// - The child starts with an empty signal mask and default dispositions (a parent on a libdispatch
///   thread would otherwise pass on a mask that blocks SIGTERM), and inherits no descriptor of ours
///   beyond its standard input, output and error.
public final class ChildProcess: Sendable {
    /// How a child ended.
    public enum Termination: Sendable, Equatable, CustomStringConvertible {
        /// It called `exit` with this status.
        case exited(Int32)
        /// A signal ended it.
        case signalled(Int32)

        /// "exit status N" or "signal N".
        public var description: String {
            switch self {
            case .exited(let status): "exit status \(status)"
            case .signalled(let signal): "signal \(signal)"
            }
        }
    }

    /// Where a standard stream of the child goes.
    public enum Stream: Sendable {
        /// `/dev/null`.
        case nullDevice
        /// A pipe whose other end this object holds (for standard input: the child reads end-of-file
        /// once this process exits, however it exits).
        case pipe
        /// For an output stream, a file created or truncated; for standard input, a file read from its start.
        case file(String)
    }

    /// Why a child could not be spawned or did not finish in time.
    public struct Failure: Error, CustomStringConvertible {
        /// What failed, with the executable and the system's reason.
        public let description: String
        /// A failure described by `description`.
        public init(_ description: String) { self.description = description }
    }

    /// The child's process id.
    public let pid: pid_t
    /// The read end of the child's standard output when it is ``Stream/pipe``.
    let outputDescriptor: Int32?
    /// The read end of the child's standard error when it is ``Stream/pipe``.
    let errorDescriptor: Int32?

    private struct State {
        /// The write end of the child's standard input when it is ``Stream/pipe`` (-1 once closed).
        var inputDescriptor: Int32?
        var termination: Termination?
        var waiters: [UUID: CheckedContinuation<Termination?, Never>] = [:]
        var exitHandlers: [@Sendable (Termination) -> Void] = []
        var abandoned: Set<UUID> = []
    }
    private let state: LockedState<State>

    private init(pid: pid_t, input: Int32?, output: Int32?, error: Int32?) {
        self.pid = pid
        self.state = LockedState(State(inputDescriptor: input))
        self.outputDescriptor = output
        self.errorDescriptor = error
    }

    deinit {
        // Readers and the reaper hold strong references while they use the descriptors or the pid.
        for descriptor in [state.withLock { $0.inputDescriptor }, outputDescriptor, errorDescriptor] {
            if let descriptor, descriptor >= 0 { close(descriptor) }
        }
    }

    /// Closes our end of the child's standard input (a ``Stream/pipe``): the child reads end-of-file,
    /// as it would if this process ended.
    public func closeStandardInput() {
        state.withLock { locked in
            if let descriptor = locked.inputDescriptor, descriptor >= 0 { close(descriptor) }
            locked.inputDescriptor = -1
        }
    }

    /// Writes `text` to the child's standard input (a ``Stream/pipe``) on a thread of its own, for
    /// scripting an interactive child line by line.
    ///
    /// - Throws: ``Failure`` when standard input is not an open pipe or the write fails (the child closed it).
    public func writeStandardInput(_ text: String) async throws {
        guard let descriptor = state.withLock({ $0.inputDescriptor }), descriptor >= 0 else {
            throw Failure("standard input is not an open pipe")
        }
        let bytes = Array(text.utf8)
        // A child that closed its end must fail this write, not kill the test process with SIGPIPE.
        #if canImport(Glibc)
            _ = Glibc.signal(SIGPIPE, SIG_IGN)
        #elseif canImport(Darwin)
            _ = Darwin.signal(SIGPIPE, SIG_IGN)
        #endif
        try await onDedicatedThread("write \(pid)") {
            try withExtendedLifetime(self) {
                var offset = 0
                while offset < bytes.count {
                    let written = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                    if written < 0, errno == EINTR { continue }
                    guard written > 0 else { throw Failure("write to standard input failed: errno \(errno)") }
                    offset += written
                }
            }
        }
    }

    /// Spawns `executable` with `arguments` and starts the thread that will reap it.
    ///
    /// - Throws: ``Failure`` when a pipe cannot be made or `posix_spawn` fails (missing file, not executable).
    public static func spawn(
        executable: String, arguments: [String], environment: [String: String]? = nil,
        standardInput: Stream = .nullDevice, standardOutput: Stream = .pipe, standardError: Stream = .pipe
    ) throws -> ChildProcess {
        var parentEnds: [Int32] = []
        var childEnds: [Int32] = []
        defer { for descriptor in childEnds { close(descriptor) } }
        func closeParentEnds() { for descriptor in parentEnds { close(descriptor) } }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }

        /// Wires `stream` to descriptor `target` of the child; returns the parent's end of a pipe, if any.
        func wire(_ stream: Stream, to target: Int32) throws -> Int32? {
            switch stream {
            case .nullDevice:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
                return nil
            case .file(let path):
                if target == 0 {
                    posix_spawn_file_actions_addopen(&actions, target, path, O_RDONLY, 0)
                } else {
                    posix_spawn_file_actions_addopen(&actions, target, path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
                }
                return nil
            case .pipe:
                var ends: [Int32] = [-1, -1]
                guard makeCloseOnExecPipe(&ends) else { throw Failure("pipe failed: errno \(errno)") }
                let (parentEnd, childEnd) = target == 0 ? (ends[1], ends[0]) : (ends[0], ends[1])
                parentEnds.append(parentEnd)
                childEnds.append(childEnd)
                // dup2 clears close-on-exec on the copy the child keeps.
                posix_spawn_file_actions_adddup2(&actions, childEnd, target)
                return parentEnd
            }
        }

        let input: Int32?
        let output: Int32?
        let error: Int32?
        do {
            input = try wire(standardInput, to: 0)
            output = try wire(standardOutput, to: 1)
            error = try wire(standardError, to: 2)
        } catch {
            closeParentEnds()
            throw error
        }
        // Descriptors other code opened without close-on-exec (or before setting it) stay ours.
        _ = closeFrom?(&actions, 3)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGCHLD] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([executable] + arguments).map { strdup($0) }
        defer { for pointer in argv { free(pointer) } }
        let environmentList = (environment ?? ProcessInfo.processInfo.environment).map {
            strdup("\($0.key)=\($0.value)")
        }
        defer { for pointer in environmentList { free(pointer) } }

        var pid: pid_t = 0
        let status = (argv + [nil]).withUnsafeBufferPointer { arguments in
            (environmentList + [nil]).withUnsafeBufferPointer { environment in
                posix_spawn(
                    &pid, executable, &actions, &attributes, UnsafeMutablePointer(mutating: arguments.baseAddress!),
                    UnsafeMutablePointer(mutating: environment.baseAddress!))
            }
        }
        guard status == 0 else {
            closeParentEnds()
            throw Failure("could not start \(executable): \(String(cString: strerror(status)))")
        }
        let child = ChildProcess(pid: pid, input: input, output: output, error: error)
        let reaper = Thread { child.reap() }
        reaper.name = "reaper \(pid)"
        reaper.start()
        return child
    }

    /// Runs on the reaper thread: waits without reaping, marks the pid gone, then reaps it.
    private func reap() {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 {
            if errno != EINTR { break }
        }
        var status: Int32 = 0
        let (ended, waiting, handlers): (Termination, [CheckedContinuation<Termination?, Never>], _) = state.withLock {
            locked in
            while waitpid(pid, &status, 0) == -1, errno == EINTR {}
            let ended: Termination =
                (status & 0x7f) == 0 ? .exited((status >> 8) & 0xff) : .signalled(status & 0x7f)
            locked.termination = ended
            let waiting = Array(locked.waiters.values)
            locked.waiters.removeAll()
            let handlers = locked.exitHandlers
            locked.exitHandlers.removeAll()
            return (ended, waiting, handlers)
        }
        for continuation in waiting { continuation.resume(returning: ended) }
        for handler in handlers { handler(ended) }
    }

    /// How the child ended, or nil while it runs (or is not reaped yet).
    public var exitStatus: Termination? { state.withLock { locked in locked.termination } }

    /// Sends `number` to the child unless it is already gone. Never blocks.
    public func signal(_ number: Int32) {
        state.withLock { locked in
            guard locked.termination == nil else { return }
            _ = kill(pid, number)
        }
    }

    /// Runs `handler` once the child is reaped (at once, on this thread, if it already is).
    public func onExit(_ handler: @escaping @Sendable (Termination) -> Void) {
        let ended: Termination? = state.withLock { locked in
            if let termination = locked.termination { return termination }
            locked.exitHandlers.append(handler)
            return nil
        }
        if let ended { handler(ended) }
    }

    /// Suspends until the child is reaped.
    public func waitForExit() async -> Termination {
        // Without a timer the wait ends only with the child: a nil here would be a bug in `reap`.
        await waitForExit(timeout: nil) ?? .signalled(0)
    }

    /// Suspends until the child is reaped, `timeout` passes (nil), or the task is cancelled (nil).
    public func waitForExit(timeout: Duration?) async -> Termination? {
        let id = UUID()
        let timer = timeout.map { timeout in
            Task { [weak self] in
                try? await Task.sleep(for: timeout)
                self?.abandonWaiter(id)
            }
        }
        defer { timer?.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Termination?, Never>) in
                let ended: Termination?? = state.withLock { locked in
                    if let termination = locked.termination { return .some(termination) }
                    // The timer or the cancellation came first.
                    if locked.abandoned.remove(id) != nil { return .some(nil) }
                    locked.waiters[id] = continuation
                    return nil
                }
                if let ended { continuation.resume(returning: ended) }
            }
        } onCancel: {
            abandonWaiter(id)
        }
    }

    /// Ends the wait `id` with nil; remembered when the waiter has not registered yet.
    private func abandonWaiter(_ id: UUID) {
        let waiter: CheckedContinuation<Termination?, Never>? = state.withLock { locked in
            if let waiter = locked.waiters.removeValue(forKey: id) { return waiter }
            if locked.termination == nil { locked.abandoned.insert(id) }
            return nil
        }
        waiter?.resume(returning: nil)
    }
}

#if os(Linux)
    /// glibc's `pipe2` and `posix_spawn_file_actions_addclosefrom_np` (2.34+), looked up at run time: Swift's
    /// Glibc module is not built with `_GNU_SOURCE`, which declares them.
    private let pipe2Function: (@convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32)? = {
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pipe2").map {
            unsafeBitCast($0, to: (@convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32).self)
        }
    }()
    private let closeFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np").map {
            unsafeBitCast(
                $0, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
        }
    }()
#else
    private let pipe2Function: (@convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32)? = nil
    private let closeFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = nil
#endif

/// Serializes `pipe` + `FD_CLOEXEC` with our spawns where `pipe2` is missing.
private let pipeLock = LockedState(())

/// A pipe whose both ends are close-on-exec from the start, so no child spawned meanwhile inherits them.
private func makeCloseOnExecPipe(_ ends: inout [Int32]) -> Bool {
    if let pipe2Function { return pipe2Function(&ends, O_CLOEXEC) == 0 }
    return pipeLock.withLock { _ in
        guard pipe(&ends) == 0 else { return false }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return true
    }
}

/// Runs blocking `body` on a new thread of its own and resumes the caller with its result, so that
/// blocking reads, `usleep` and waits never occupy a thread of Swift's cooperative pool.
public func onDedicatedThread<Value: Sendable>(
    _ name: String, _ body: @escaping @Sendable () throws -> Value
) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.name = name
        thread.start()
    }
}
