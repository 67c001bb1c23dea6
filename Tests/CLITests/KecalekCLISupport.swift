import Foundation
import TidingsCore
import TidingsSandbox

/// Files and servers the Kecalek command tests share.
enum KecalekCLI {
    /// A fresh empty directory and the cache path inside it.
    static func temporaryStore() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kecalek-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent("cache.sqlite").path
    }

    /// The names in the store's directory, sorted: what a read-only command must leave unchanged.
    static func listing(beside store: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(
            atPath: URL(fileURLWithPath: store).deletingLastPathComponent().path
        )
        .sorted()
    }

    static func hex(_ key: TidingsCrypto.SymmetricKey) -> String {
        key.bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// A cache key of the test's own (not the sandbox's demo key).
    static let cacheKey = String(repeating: "5a", count: 32)

    /// `--conversation-key` arguments with the sample server's real keys.
    static func conversationKeyArguments(_ conversations: [String]) throws -> [String] {
        try conversations.flatMap { conversation in
            [
                "--conversation", conversation, "--conversation-key",
                "\(conversation)=\(hex(try KecalekSandboxServer.sampleKey(for: conversation)))",
            ]
        }
    }

    /// The sample sandbox on a loopback WebSocket, for `--server` runs.
    static func server() async throws -> (KecalekSandboxServer, KecalekSandboxWebSocketServer) {
        let sandbox = try await KecalekSandboxServer.sample(clock: ContinuousClock())
        return (sandbox, try KecalekSandboxWebSocketServer(server: sandbox))
    }

    /// The `Error:` lines of a run's standard error.
    static func errorLines(_ run: ToolRun) -> [Substring] {
        run.standardError.split(separator: "\n").filter { $0.hasPrefix("Error: ") }
    }
}
