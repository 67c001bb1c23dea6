import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsSandbox

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `tidings openmates sync --server` against real servers on loopback: a running `tidings sandbox openmates`
/// (with a token or the session cookie, and `--reset`), and a server whose sync never completes (exit 75).
@Suite(.timeLimit(.minutes(2))) struct OpenMatesSyncServerCommandTests {
    private func temporaryStore() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "openmates-cli-server-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent("store.sqlite").path
    }

    @Test func syncWithServerAgainstTheRunningSandboxThenResetStartsTheStoreOver() async throws {
        let sandbox = try await SandboxOpenMatesLaunch.start()
        defer { sandbox.child.signal(SIGKILL) }
        let store = try temporaryStore()
        let server = sandbox.origin.absoluteString

        let first = try await ToolRun.run([
            "openmates", "sync", "--server", server, "--token", sandbox.token, "--store", store,
        ])
        #expect(first.status == 0, "\(first.standardError)")
        let lines = first.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.first == "OpenMates sync: 127.0.0.1 into \(store)")
        #expect(lines.contains("sent: phased_sync_request ×1, sync_status_request ×1"))
        #expect(
            lines.contains { $0.hasPrefix("store: 26 chats (16 metadata-only)") && $0.contains("(before: 0 chats") })
        #expect(lines.last == "sync: complete")
        #expect(!(first.standardOutput + first.standardError).contains(sandbox.token))

        // Again on the same store with the session cookie: the store is kept, so it starts from 26 chats.
        let again = try await ToolRun.run([
            "openmates", "sync", "--server", server, "--cookie", "auth_refresh_token=\(sandbox.token)", "--store",
            store,
        ])
        #expect(again.status == 0, "\(again.standardError)")
        #expect(again.standardOutput.contains("(before: 26 chats (16 metadata-only)"))
        #expect(again.standardOutput.hasSuffix("sync: complete\n"))

        // --reset: the server data goes first, and the sync fills the store again from nothing.
        let reset = try await ToolRun.run([
            "openmates", "sync", "--server", server, "--token", sandbox.token, "--store", store, "--reset", "--json",
        ])
        #expect(reset.status == 0, "\(reset.standardError)")
        let objects = try reset.standardOutput.split(separator: "\n").map { try JSONValue(parsing: String($0)) }
        let summary = try #require(objects.first { $0["type"] == "store" })
        #expect(summary["before"]?["chats"] == 0)
        #expect(summary["chats"] == 26)
        let received = try #require(objects.first { $0["type"] == "traffic" && $0["direction"] == "received" })
        // From nothing, phase 1b carries content for its 10 chats again (an up-to-date store would get none).
        #expect(received["counts"]?["phase_1b_chat_content_ready"] == 1)
        #expect(objects.last?["type"] == "status")
        #expect(objects.last?["sync"] == "complete")
        #expect(!reset.standardOutput.contains(sandbox.token))

        let tail = try await sandbox.stop()
        #expect(tail.contains("Stopped on SIGINT."))
        #expect(await sandbox.child.waitForExit(timeout: .seconds(20)) == .exited(0))
    }

    /// The sandbox answers the prefetch endpoint on the WebSocket's origin, as the real server does, so
    /// `--prefetch` with `--server` finds it where the client looks: the same host and port over HTTP.
    @Test func syncWithPrefetchAgainstTheRunningSandboxStoresEveryChunkFromTheSameOrigin() async throws {
        let sandbox = try await SandboxOpenMatesLaunch.start()
        defer { sandbox.child.signal(SIGKILL) }
        #expect(sandbox.prefetchOrigin.port == sandbox.origin.port)
        let store = try temporaryStore()
        // 24 parents and 2 sub-chats: offsets 10…25 in chunks of 3, 2 s apart (real time).
        let run = try await ToolRun.run([
            "openmates", "sync", "--server", sandbox.origin.absoluteString, "--cookie",
            "auth_refresh_token=\(sandbox.token)", "--store", store, "--prefetch", "--timeout", "40",
        ])
        #expect(run.status == 0, "\(run.standardError)")
        let line = run.standardOutput.split(separator: "\n").first { $0.hasPrefix("prefetch: ") } ?? ""
        #expect(line.hasPrefix("prefetch: 6 chunks (cursor 10 → 13 → 16 → 19 → 22 → 25 → done), "), "\(line)")
        #expect(line.hasSuffix(" messages stored; finished"), "\(line)")
        #expect(!(run.standardOutput + run.standardError).contains(sandbox.token))
        _ = try await sandbox.stop()
        #expect(await sandbox.child.waitForExit(timeout: .seconds(20)) == .exited(0))
    }

    /// A server restarted cold answers the first sync from its database (the last chat's content only) and
    /// pushes `cache_primed` when its re-warm ends: `openmates sync` waits for the sync asked for then, so an
    /// empty store plus a cold cache never ends "complete" with the newest chats empty; a re-warm that outlasts
    /// `--timeout` is exit 75.
    @Test func aColdServerIsWaitedForUntilItsCacheIsPrimedOrTheTimeout() async throws {
        let warm = try await SandboxOpenMatesLaunch.start(["--cold-for", "1"])
        defer { warm.child.signal(SIGKILL) }
        #expect(warm.output.contains("cache cold until 1 s after the first sync"))
        let store = try temporaryStore()
        let run = try await ToolRun.run([
            "openmates", "sync", "--server", warm.origin.absoluteString, "--token", warm.token, "--store", store,
            "--json",
        ])
        #expect(run.status == 0, "\(run.standardError)")
        let objects = try run.standardOutput.split(separator: "\n").map { try JSONValue(parsing: String($0)) }
        let received = try #require(objects.first { $0["type"] == "traffic" && $0["direction"] == "received" })
        #expect(received["counts"]?["cache_primed"] == 1)
        #expect(received["counts"]?["phased_sync_complete"] == 2)
        // The sync after the re-warm filled phase 1b's 10 parents, not the database answer's one.
        let summary = try #require(objects.first { $0["type"] == "store" })
        #expect(summary["chats"] == 26)
        #expect(summary["metadataOnly"] == 16, "\(summary)")
        #expect(objects.last?["sync"] == "complete")
        _ = try await warm.stop()

        let cold = try await SandboxOpenMatesLaunch.start(["--cold-for", "600"])
        defer { cold.child.signal(SIGKILL) }
        let pending = try await ToolRun.run([
            "openmates", "sync", "--server", cold.origin.absoluteString, "--token", cold.token, "--store",
            try temporaryStore(), "--timeout", "3",
        ])
        #expect(pending.status == 75)
        #expect(pending.standardOutput.hasSuffix("sync: pending\n"))
        _ = try await cold.stop()
    }

    @Test func aSyncStillPendingAtTheTimeoutExits75AndIsNeverCompletedByTime() async throws {
        let token = "tok-SECRET-75"
        let server = OpenMatesSandboxServer(token: token)
        await server.seed(parents: 4)
        var variant = OpenMatesSandboxVariant()
        variant.withheldEvents = ["phased_sync_complete"]
        await server.setVariant(variant)
        let endpoint = try OpenMatesSandboxWebSocketServer(server: server)
        defer { endpoint.stop() }
        let store = try temporaryStore()
        let run = try await ToolRun.run([
            "openmates", "sync", "--server", endpoint.origin.absoluteString, "--token", token, "--store", store,
            // Long enough for a loaded machine to connect and store the phases it is sent; the command always
            // waits all of it, since the sync never completes.
            "--timeout", "10",
        ])
        #expect(run.status == 75)
        #expect(run.standardOutput.hasSuffix("sync: pending\n"))
        #expect(run.standardError.contains("Sync still pending after 10 s"))
        #expect(run.standardError.contains("nothing marks it complete by time"))
        #expect(!(run.standardOutput + run.standardError).contains("SECRET"))
        // The phases it did send were stored: pending is about completion, not about an empty store.
        #expect(run.standardOutput.contains("store: 4 chats"))
        #expect(await server.connectionsAccepted == 1)
    }
}
