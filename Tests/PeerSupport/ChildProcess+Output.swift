import Foundation
import TidingsCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension ChildProcess {
    /// What a finished child printed, and how it ended.
    public struct Outcome: Sendable {
        /// How the child ended.
        public var termination: Termination
        /// Everything it wrote to standard output.
        public var standardOutput: Data
        /// Everything it wrote to standard error.
        public var standardError: Data
    }

    /// Runs `executable` to the end (standard input from `standardInput`) and collects both output streams;
    /// the child is killed (SIGKILL) and ``Failure`` thrown when it has not finished within `timeout`.
    public static func run(
        executable: String, arguments: [String], environment: [String: String]? = nil,
        standardInput: Stream = .nullDevice, timeout: Duration
    ) async throws -> Outcome {
        let child = try spawn(
            executable: executable, arguments: arguments, environment: environment, standardInput: standardInput)
        let streams = [child.outputDescriptor, child.errorDescriptor].compactMap { $0 }
        let (buffers, end) = try await child.pump(streams, timeout: timeout) { _ in false }
        guard end == .ended else {
            child.signal(SIGKILL)
            _ = await child.waitForExit()
            throw Failure("\(executable) \(arguments.joined(separator: " ")) did not finish within \(timeout)")
        }
        let termination = await child.waitForExit()
        return Outcome(termination: termination, standardOutput: buffers[0], standardError: buffers[1])
    }

    /// Reads standard output on a thread of its own until `isComplete` holds for what was read, the
    /// stream ends, or `timeout` passes.
    ///
    /// - Returns: What was read, and whether `isComplete` held.
    public func readOutput(timeout: Duration, until isComplete: @escaping @Sendable (Data) -> Bool) async throws
        -> (data: Data, complete: Bool)
    {
        guard let outputDescriptor else { throw Failure("standard output is not a pipe") }
        let (buffers, end) = try await pump([outputDescriptor], timeout: timeout) { isComplete($0[0]) }
        return (buffers[0], end == .stopped)
    }

    /// Reads and discards the rest of standard output on a thread of its own until the stream ends, so
    /// that a chatty child never blocks on a full pipe.
    public func drainOutput() {
        guard let outputDescriptor else { return }
        let thread = Thread {
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(outputDescriptor, &chunk, chunk.count)
                if count > 0 { continue }
                if count < 0, errno == EINTR { continue }
                break
            }
            // Keeps the descriptor open (the object alive) until the stream has ended.
            withExtendedLifetime(self) {}
        }
        thread.name = "drain \(pid)"
        thread.start()
    }

    /// Why ``pump(_:timeout:stop:)`` returned.
    enum PumpEnd: Sendable { case ended, stopped, timedOutOrCancelled }

    /// Reads `descriptors` on a dedicated thread until every one ended, `stop` holds, the deadline
    /// passes or the task is cancelled; `stop` sees the buffers after each read.
    func pump(
        _ descriptors: [Int32], timeout: Duration, stop: @escaping @Sendable ([Data]) -> Bool
    ) async throws -> ([Data], PumpEnd) {
        let cancelled = CancelFlag()
        let deadline = ContinuousClock.now + timeout
        return try await withTaskCancellationHandler {
            try await onDedicatedThread("read \(pid)") {
                withExtendedLifetime(self) {
                    Self.pumpBlocking(descriptors, deadline: deadline, cancelled: cancelled, stop: stop)
                }
            }
        } onCancel: {
            cancelled.set()
        }
    }

    private static func pumpBlocking(
        _ descriptors: [Int32], deadline: ContinuousClock.Instant, cancelled: CancelFlag, stop: ([Data]) -> Bool
    ) -> ([Data], PumpEnd) {
        var buffers = descriptors.map { _ in Data() }
        var open = Set(descriptors.indices)
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while !open.isEmpty, !cancelled.isSet {
            let remaining = ContinuousClock.now.duration(to: deadline)
            if remaining <= .zero { return (buffers, .timedOutOrCancelled) }
            // At most 100 ms per poll, so a cancellation is seen soon.
            let slice = min(remaining, .milliseconds(100))
            let milliseconds = Int32(
                slice.components.seconds * 1000 + slice.components.attoseconds / 1_000_000_000_000_000)
            var polled = open.sorted().map { pollfd(fd: descriptors[$0], events: Int16(POLLIN), revents: 0) }
            let ready = poll(&polled, nfds_t(polled.count), max(milliseconds, 1))
            if ready < 0 {
                if errno == EINTR { continue }
                return (buffers, .timedOutOrCancelled)
            }
            for entry in polled where entry.revents != 0 {
                guard let index = descriptors.firstIndex(of: entry.fd) else { continue }
                let count = read(entry.fd, &chunk, chunk.count)
                if count > 0 {
                    buffers[index].append(contentsOf: chunk[0..<count])
                    if stop(buffers) { return (buffers, .stopped) }
                } else if count == 0 || errno != EINTR && errno != EAGAIN {
                    open.remove(index)
                }
            }
        }
        return (buffers, open.isEmpty ? .ended : .timedOutOrCancelled)
    }
}

/// A flag set once from any thread (a task's cancellation) and read by a blocking loop.
final class CancelFlag: Sendable {
    private struct State {
        var value = false
    }
    private let state = LockedState(State())

    func set() { state.withLock { locked in locked.value = true } }
    var isSet: Bool { state.withLock { locked in locked.value } }
}
