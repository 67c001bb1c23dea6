import Foundation
import PeerSupport
import Testing
import TidingsSandbox
import TidingsSandboxKit

#if canImport(Glibc)
    import Glibc
#endif

/// `tidings mastodon watch` prints what the notification policy raises: a mention travels from the sandbox (on
/// a loopback socket) as real Web Push to the watch's own endpoint and through the user stream's poll; it is
/// raised once, and the other path finds it raised.
@Suite(.timeLimit(.minutes(3)), .serialized) struct MastodonWatchNotificationCommandTests {
    static func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

    @Test func aMentionIsRaisedOnceAcrossPushAndPoll() async throws {
        let server = MastodonSandboxServer()
        let alice = await server.addAccount(username: "alice", token: "alice-sandbox-token")
        let bob = await server.addAccount(username: "bob", token: "bob-sandbox-token")
        let listener = try server.httpServer().serve()
        defer { listener.stop() }
        let store = try MastodonCommandTests.temporaryStore()
        var environment = ProcessInfo.processInfo.environment
        environment["TIDINGS_MASTODON_TOKEN"] = "alice-sandbox-token"
        let child = try ChildProcess.spawn(
            executable: ToolRun.executable.path,
            arguments: [
                "mastodon", "watch", "--server", listener.url.absoluteString, "--store", store, "--push", "content",
                "--json",
            ],
            environment: environment, standardError: .nullDevice)
        defer { child.signal(SIGKILL) }
        let (ready, isReady) = try await child.readOutput(timeout: .seconds(50)) { data in
            Self.text(data).contains("\"push\":\"subscribed\"")
        }
        #expect(isReady, "\(Self.text(ready))")
        try #require(isReady)
        #expect(server.pushSubscriptions.subscription(token: "alice-sandbox-token") != nil)

        await server.post(as: bob, "lunch @alice?", mentioning: [alice])
        let (decided, both) = try await child.readOutput(timeout: .seconds(50)) { data in
            let text = Self.text(data)
            return text.contains("\"decision\":\"raise\"") && text.contains("\"reason\":\"alreadyRaised\"")
        }
        let lines = Self.text(decided).split(separator: "\n").filter { $0.contains("\"type\":\"notification\"") }
        #expect(both, "\(lines)")
        let raised = lines.filter { $0.contains("\"decision\":\"raise\"") }
        #expect(raised.count == 1, "\(lines)")
        #expect(raised.first?.contains("lunch @alice?") == true)

        child.signal(SIGTERM)
        #expect(await child.waitForExit(timeout: .seconds(20)) == .exited(0))
        #expect(!Self.text(ready + decided).contains("alice-sandbox-token"))
    }
}
