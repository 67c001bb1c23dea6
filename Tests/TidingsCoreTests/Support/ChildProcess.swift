import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child process for the store's multi-process tests, started with `posix_spawn` and reaped with `waitpid`
/// on a thread of its own, so no thread of Swift's cooperative pool ever blocks on it.
///
/// Its standard output and error go to files (no pipe the child could fill and stall on); ``output`` reads
/// what it wrote so far. Every wait has a deadline, after which the child is killed.
final class ChildProcess: Sendable {
    /// The child's process id.
    let pid: pid_t
    private let outputPath: String
    private let errorPath: String

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Starts `executable` with `arguments`, its output in files under `directory`.
    init(_ executable: URL, _ arguments: [String], directory: URL) throws {
        let name = UUID().uuidString
        outputPath = directory.appendingPathComponent("\(name).out").path
        errorPath = directory.appendingPathComponent("\(name).err").path
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable.path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let code = posix_spawn(&child, executable.path, &actions, nil, argv, environ)
        guard code == 0 else { throw Failure(description: "posix_spawn \(executable.path): \(code)") }
        pid = child
    }

    /// What the child wrote to standard output so far.
    var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }
    /// What the child wrote to standard error so far.
    var errors: String { (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "" }

    /// Waits for the child to exit and returns its exit status; kills it and throws at the deadline or when
    /// the task is cancelled.
    func exitStatus(within timeout: Duration = .seconds(50)) async throws -> Int32 {
        let pid = self.pid
        let deadline = DispatchWorkItem { kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(
            deadline: .now() + .milliseconds(Int(timeout.components.seconds * 1000)), execute: deadline)
        let status: Int32 = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let thread = Thread {
                    var status: Int32 = 0
                    while waitpid(pid, &status, 0) < 0, errno == EINTR {}
                    continuation.resume(returning: status)
                }
                thread.start()
            }
        } onCancel: {
            kill(pid, SIGKILL)
        }
        deadline.cancel()
        // WIFEXITED / WEXITSTATUS, spelled out: the C macros are not imported.
        guard status & 0x7F == 0 else {
            throw Failure(description: "child \(pid) ended by signal \(status & 0x7F): \(output) \(errors)")
        }
        return (status >> 8) & 0xFF
    }

    /// Waits until `path` exists, checking every 10 ms without blocking a thread; throws at the deadline.
    static func waitForFile(_ path: String, within timeout: Duration = .seconds(30)) async throws {
        let clock = ContinuousClock()
        let end = clock.now + timeout
        while !FileManager.default.fileExists(atPath: path) {
            guard clock.now < end else { throw Failure(description: "\(path) did not appear in \(timeout)") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Waits until the child's output contains `text`; throws at the deadline.
    func waitForOutput(_ text: String, within timeout: Duration = .seconds(30)) async throws {
        let clock = ContinuousClock()
        let end = clock.now + timeout
        while !output.contains(text) {
            guard clock.now < end else { throw Failure(description: "no '\(text)' in \(timeout): \(output) \(errors)") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// The built `StoreCrashWriter`: the test bundle sits in the build folder next to the executables.
    static var storeChild: URL {
        var url = Bundle.main.bundleURL
        for _ in 0..<4 {
            let candidate = url.appendingPathComponent("StoreCrashWriter")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            url.deleteLastPathComponent()
        }
        return Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("StoreCrashWriter")
    }
}
