import Foundation
import Testing
import TidingsCore
import TidingsSandbox
import TidingsSandboxKit

@testable import tidings

/// `tidings mastodon sync|show`, run in process through ``Runner/capture(_:)``: against the in-process sandbox
/// and against a sandbox on a loopback socket that outlives the runs, so a second run can be checked on the
/// server's side.
@Suite(.timeLimit(.minutes(1))) struct MastodonCommandTests {
    /// A sandbox where alice follows bob, who posted 30 statuses, on a loopback port, recording each request's path and query names as the server saw
    /// them (the kit's log keeps no query, since one may hold a secret; these tests need `min_id`).
    final class LoopbackSandbox: Sendable {
        let server: MastodonSandboxServer
        let bob: String
        let listener: SandboxHTTPListener
        private let seen = LockedState([(path: String, query: [String])]())

        init() async throws {
            let server = MastodonSandboxServer()
            let alice = await server.addAccount(username: "alice", token: "alice-sandbox-token")
            bob = await server.addAccount(username: "bob", token: "bob-sandbox-token")
            await server.follow(alice, bob)
            for index in 0..<30 { await server.post(as: bob, "<p>post \(index)</p>") }
            let inner = server.httpServer()
            let seen = seen
            let outer = SandboxHTTPServer { request in
                seen.withLock { $0.append((request.path, request.query.map(\.name))) }
                return await inner.handle(request)
            }
            self.server = server
            self.listener = try outer.serve()
        }

        /// The home-timeline requests so far, as their query names.
        var homeRequests: [[String]] {
            seen.withLock { $0.filter { $0.path == "/api/v1/timelines/home" }.map(\.query) }
        }

        func clear() { seen.withLock { $0.removeAll() } }

        deinit { listener.stop() }
    }

    static func temporaryStore() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "mastodon-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent("store.sqlite").path
    }

    static func object(_ line: Substring) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    static func syncObject(_ run: Runner.Captured) throws -> [String: Any] {
        let line = try #require(run.standardOutput.split(separator: "\n").last)
        return try object(line)
    }

    @Test func aSecondRunAgainstTheSameServerAsksOnlyForNewerStatuses() async throws {
        let sandbox = try await LoopbackSandbox()
        let store = try Self.temporaryStore()
        let runner = Runner(root: tidingsRoot, environment: ["TIDINGS_MASTODON_TOKEN": "alice-sandbox-token"])
        let arguments = [
            "mastodon", "sync", "--server", sandbox.listener.url.absoluteString, "--store", store, "--json",
        ]

        let first = await runner.capture(arguments)
        #expect(first.status == 0, "\(first.standardError)")
        let firstHome = try #require(try Self.syncObject(first)["home"] as? [String: Any])
        #expect(firstHome["inserted"] as? Int == 30)
        #expect(sandbox.homeRequests.allSatisfy { !$0.contains("min_id") })

        for index in 0..<3 { await sandbox.server.post(as: sandbox.bob, "<p>new \(index)</p>") }
        sandbox.clear()
        let second = await runner.capture(arguments)
        #expect(second.status == 0, "\(second.standardError)")
        let summary = try Self.syncObject(second)
        let home = try #require(summary["home"] as? [String: Any])
        #expect(home["inserted"] as? Int == 3)
        #expect(home["cached"] as? Int == 33)
        #expect(home["gaps"] as? Int == 0)
        // The server saw the second run's home request anchored on what the store held.
        #expect(!sandbox.homeRequests.isEmpty)
        #expect(sandbox.homeRequests.allSatisfy { $0.contains("min_id") })
        #expect((summary["minIDRequests"] as? Int ?? 0) >= 1)
        #expect(summary["tier"] as? String == "streaming")

        let show = await runner.capture(["mastodon", "show", "--store", store, "--limit", "1"])
        #expect(show.status == 0)
        #expect(show.standardOutput.contains("33 statuses, 0 gap(s)"))
        #expect(show.standardOutput.contains("bob: new 2"))
    }

    @Test func moreNewStatusesThanAPageLeaveAGapThatShowPrintsAsAGap() async throws {
        let sandbox = try await LoopbackSandbox()
        let store = try Self.temporaryStore()
        let runner = Runner(root: tidingsRoot, environment: ["TIDINGS_MASTODON_TOKEN": "alice-sandbox-token"])
        let arguments = [
            "mastodon", "sync", "--server", sandbox.listener.url.absoluteString, "--store", store, "--json",
        ]
        #expect(await runner.capture(arguments).status == 0)
        // 45 new statuses: more than one page (40) above the stored newest.
        for index in 0..<45 { await sandbox.server.post(as: sandbox.bob, "<p>burst \(index)</p>") }
        let second = await runner.capture(arguments)
        #expect(second.status == 0, "\(second.standardError)")
        let home = try #require(try Self.syncObject(second)["home"] as? [String: Any])
        #expect(home["gapInserted"] as? Bool == true)
        #expect(home["gaps"] as? Int == 1)

        let show = await runner.capture(["mastodon", "show", "--store", store, "--limit", "100"])
        #expect(show.status == 0)
        let lines = show.standardOutput.split(separator: "\n")
        let gapIndex = try #require(lines.firstIndex { $0.contains("gap: not fetched yet") })
        // `min_id` pages are the rows just above the stored newest (anchored one below it, the page repeats it:
        // no hole between), so the rest of the burst lies above the page: the gap is on top of it.
        #expect(lines[gapIndex + 1].contains("burst 38"), "\(show.standardOutput)")
        let burst0 = try #require(lines.firstIndex { $0.contains("burst 0") })
        #expect(lines[burst0 + 1].contains("post 29"), "\(show.standardOutput)")
        #expect(lines.filter { $0.contains("gap:") }.count == 1)
        let json = await runner.capture(["mastodon", "show", "--store", store, "--limit", "100", "--json"])
        #expect(json.standardOutput.contains("{\"state\":\"open\",\"type\":\"gap\"}"))
    }

    @Test func theTokenNeverAppearsAndARefusedTokenExits77() async throws {
        let sandbox = try await LoopbackSandbox()
        let store = try Self.temporaryStore()
        let secret = "s3cret-mastodon-token-never-printed"
        for json in [false, true] {
            let runner = Runner(root: tidingsRoot, environment: ["TIDINGS_MASTODON_TOKEN": secret])
            let run = await runner.capture(
                ["mastodon", "sync", "--server", sandbox.listener.url.absoluteString, "--store", store]
                    + (json ? ["--json"] : []))
            #expect(run.status == 77)
            #expect(run.standardError.contains("refused the token"))
            #expect(!run.standardOutput.contains(secret) && !run.standardError.contains(secret))
        }
        let good = await Runner(root: tidingsRoot, environment: [:]).capture([
            "mastodon", "sync", "--server", sandbox.listener.url.absoluteString, "--token", "alice-sandbox-token",
            "--store", store,
        ])
        #expect(good.status == 0)
        #expect(
            !good.standardOutput.contains("alice-sandbox-token") && !good.standardError.contains("alice-sandbox-token"))
    }

    @Test func usageAndUnreachableServersHaveTheirExitCodes() async throws {
        let store = try Self.temporaryStore()
        let runner = Runner(root: tidingsRoot, environment: [:])
        #expect(await runner.capture(["mastodon", "sync", "--server", "ftp://example.invalid"]).status == 64)
        #expect(await runner.capture(["mastodon", "sync", "--server", "https://example.invalid"]).status == 64)
        #expect(await runner.capture(["mastodon", "show", "--limit", "-1"]).status == 64)
        // Port 9 (discard), which nothing here listens on: a stopped listener's port can be taken by another
        // test's server in the meantime, which then answers (or hangs) instead of refusing.
        let url = "http://127.0.0.1:9"
        let unreachable = await runner.capture(["mastodon", "sync", "--server", url, "--token", "t", "--store", store])
        #expect(unreachable.status == 69, "\(unreachable.standardError)")
        #expect(await runner.capture(["mastodon", "show", "--store", store + ".missing"]).status == 66)
    }

    @Test func theInProcessSandboxSyncsThenShowsOfflineAndASecondRunUsesMinID() async throws {
        let store = try Self.temporaryStore()
        let runner = Runner(root: tidingsRoot, environment: [:])
        let first = await runner.capture(["mastodon", "sync", "--store", store, "--json"])
        #expect(first.status == 0, "\(first.standardError)")
        let summary = try Self.syncObject(first)
        #expect((summary["home"] as? [String: Any])?["inserted"] as? Int == 40)
        // A cold run asks home without `min_id`; only the notifications poll asks once above the newest it got,
        // where the server links no newer page: the proof it reached the top.
        #expect(summary["minIDRequests"] as? Int == 1)
        #expect(summary["notifications"] as? Int == 3)
        // The sandbox is seeded again with the same IDs: the second run asks only above the stored newest.
        let second = try Self.syncObject(await runner.capture(["mastodon", "sync", "--store", store, "--json"]))
        #expect((second["home"] as? [String: Any])?["inserted"] as? Int == 0)
        #expect((second["minIDRequests"] as? Int ?? 0) >= 1)

        let show = await runner.capture(["mastodon", "show", "--store", store, "--json", "--limit", "3"])
        #expect(show.status == 0)
        let lines = show.standardOutput.split(separator: "\n")
        try #require(lines.count == 4, "mastodon show printed: \(show.standardOutput) \(show.standardError)")
        let head = try Self.object(lines[0])
        #expect(head["type"] as? String == "store" && head["statuses"] as? Int == 40 && head["gaps"] as? Int == 0)
        let newest = try Self.object(lines[1])
        #expect(newest["type"] as? String == "status" && newest["text"] as? String == "@alice have a look")
    }
}
