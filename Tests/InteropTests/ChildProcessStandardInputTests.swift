import Foundation
import PeerSupport
import Testing

/// ChildProcess can give a child a file as its standard input (the push CLI tests and tidings-bench's P2 pipe a
/// message body into `tidings push decrypt` that way).
@Suite(.timeLimit(.minutes(1))) struct ChildProcessStandardInputTests {
    @Test func standardInputComesFromAFile() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tidings-stdin-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        let bytes = Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try bytes.write(to: file)
        let outcome = try await ChildProcess.run(
            executable: "/bin/cat", arguments: [], standardInput: .file(file.path), timeout: .seconds(30))
        #expect(outcome.termination == .exited(0))
        #expect(outcome.standardOutput == bytes)
    }
}
