import Foundation
import PeerSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The store tests' second process (`Tests/StoreCrashWriter`), its output in files of the test's folder.
///
/// Spawning and reaping are PeerSupport's ``ChildProcess`` (off the cooperative pool); this adds what the
/// two-process tests read: the output so far, the exit status with a deadline, and polls that suspend.
struct StoreChild {
    /// Why a child did not finish as expected.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let process: ChildProcess
    private let outputPath: String
    private let errorPath: String

    /// Starts `StoreCrashWriter` with `arguments`, writing its output into `directory`; its standard input
    /// is `/dev/null`, or with `standardInput: .pipe` one that ``ChildProcess/closeStandardInput()`` ends.
    init(_ arguments: [String], directory: URL, standardInput: ChildProcess.Stream = .nullDevice) throws {
        let name = UUID().uuidString
        outputPath = directory.appendingPathComponent("\(name).out").path
        errorPath = directory.appendingPathComponent("\(name).err").path
        process = try ChildProcess.spawn(
            executable: Self.executable.path, arguments: arguments, standardInput: standardInput,
            standardOutput: .file(outputPath),
            standardError: .file(errorPath))
    }

    /// What the child wrote to standard output so far.
    var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }
    /// What the child wrote to standard error so far.
    var errors: String { (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "" }

    /// The child's exit status; at the deadline it is killed and this throws, as it does when a signal ended it.
    func exitStatus(within timeout: Duration = .seconds(50)) async throws -> Int32 {
        guard let termination = await process.waitForExit(timeout: timeout) else {
            process.signal(SIGKILL)
            throw Failure(description: "child \(process.pid) still ran after \(timeout): \(output) \(errors)")
        }
        switch termination {
        case .exited(let status): return status
        case .signalled(let signal):
            throw Failure(description: "child \(process.pid) ended by signal \(signal): \(output) \(errors)")
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

    /// The built `StoreCrashWriter`.
    static var executable: URL { builtExecutable(named: "StoreCrashWriter") }
}
