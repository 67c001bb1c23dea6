import Foundation
import Testing
import TidingsSandbox

@testable import tidings

/// The same failures as ``KecalekCommandTests``, in process: `runKecalekSync` throws one ``ToolFailure`` whose
/// code and lines are what the tool prints and exits with, and ``Runner`` maps errors to exit codes.
@Suite(.timeLimit(.minutes(1))) struct KecalekSyncInProcessTests {
    private func options(_ server: String, store: String, token: String?, conversations: [String]) throws
        -> KecalekSyncOptions
    {
        KecalekSyncOptions(
            server: server, token: token, user: "alice", store: store, keyText: KecalekCLI.cacheKey, limit: 10,
            conversations: conversations,
            conversationKeys: Dictionary(
                uniqueKeysWithValues: try conversations.map { ($0, try KecalekSandboxServer.sampleKey(for: $0)) }))
    }

    @Test func eachFailureKindHasItsExitCodeAndOneLine() async throws {
        let (sandbox, endpoint) = try await KecalekCLI.server()
        defer { endpoint.stop() }
        let url = endpoint.url.absoluteString
        let store = try KecalekCLI.temporaryStore()

        await #expect(throws: Never.self) {
            try await runKecalekSync(
                try options(url, store: store, token: sandbox.token(for: "alice"), conversations: ["random"]))
        }
        await sandbox.inject(.errorStatus("internal_error"), on: "get_deleted_since")
        let serverError = await failure {
            try await runKecalekSync(
                try options(url, store: store, token: sandbox.token(for: "alice"), conversations: ["random"]))
        }
        #expect(serverError?.code == ExitCode.protocolError)
        #expect(serverError?.lines.count == 1)
        #expect(
            serverError?.lines.first?.hasPrefix("random: not synced — KecalekError.server(get_deleted_since)") == true)

        let refused = await failure {
            try await runKecalekSync(try options(url, store: store, token: "wrong", conversations: ["random"]))
        }
        #expect(refused?.code == ExitCode.noPermission)
        #expect(
            refused?.lines == [
                "127.0.0.1:\(endpoint.url.port ?? 0) refused the token (HTTP 401); nothing synced (random)."
            ])

        endpoint.stop()
        // Port 9 rather than the stopped endpoint's: another test's listener may take that port at once, but
        // no listener bound to port 0 is ever given a port below 1024.
        let nobody = "ws://127.0.0.1:9/kecalek"
        let unreachable = await failure {
            try await runKecalekSync(
                try options(nobody, store: store, token: sandbox.token(for: "alice"), conversations: ["random"]))
        }
        #expect(unreachable?.code == ExitCode.unavailable)
        #expect(unreachable?.lines.count == 1)
    }

    @Test func theRunnerMapsUsageErrorsTo64AndFailuresToTheirCode() async throws {
        let root = Command(name: "tidings", abstract: "", subcommands: [kecalekCommand])
        let store = try KecalekCLI.temporaryStore()
        let noUser = await Runner(root: root).run([
            "kecalek", "sync", "--store", store, "--server", "ws://127.0.0.1:9/", "--key", KecalekCLI.cacheKey,
            "--conversation", "x", "--conversation-key", "x=" + KecalekCLI.cacheKey,
        ])
        #expect(noUser == ExitCode.usage)
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: store))
        let damaged = await Runner(root: root).run(["kecalek", "show", "--store", store])
        #expect(damaged == ExitCode.dataError)
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == Data("garbage".utf8))
    }

    private func failure(_ body: () async throws -> Void) async -> ToolFailure? {
        do {
            try await body()
            return nil
        } catch let failure as ToolFailure {
            return failure
        } catch {
            Issue.record("expected a ToolFailure, got \(error)")
            return nil
        }
    }
}
