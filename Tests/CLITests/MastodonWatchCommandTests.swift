import Foundation
import PeerSupport
import Testing
import TidingsSandbox
import TidingsSandboxKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `tidings mastodon watch`, run as the real executable against a sandbox on a loopback socket: it streams,
/// prints what a post on the server changed, and stops cleanly on a signal.
///
/// The sandbox answers from this test process, whose two pool threads the rest of the suite keeps busy: the
/// waits below are deadlines for a loaded machine, not expectations of speed, hence the longer limit.
@Suite(.timeLimit(.minutes(3)), .serialized) struct MastodonWatchCommandTests {
    static func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

    @Test(arguments: [SIGINT, SIGTERM])
    func watchPrintsANewPostFromTheStreamAndStopsCleanlyOnASignal(_ signalNumber: Int32) async throws {
        let server = MastodonSandboxServer()
        let alice = await server.addAccount(username: "alice", token: "alice-sandbox-token")
        let bob = await server.addAccount(username: "bob", token: "bob-sandbox-token")
        await server.follow(alice, bob)
        for index in 0..<5 { await server.post(as: bob, "<p>before \(index)</p>") }
        let listener = try server.httpServer().serve()
        defer { listener.stop() }
        let store = try MastodonCommandTests.temporaryStore()
        var environment = ProcessInfo.processInfo.environment
        environment["TIDINGS_MASTODON_TOKEN"] = "alice-sandbox-token"
        let child = try ChildProcess.spawn(
            executable: ToolRun.executable.path,
            arguments: ["mastodon", "watch", "--server", listener.url.absoluteString, "--store", store, "--json"],
            environment: environment, standardError: .nullDevice)
        defer { child.signal(SIGKILL) }

        // Ready, and the user stream open (in the ready line or in a later change).
        let (opened, isOpen) = try await child.readOutput(timeout: .seconds(50)) { data in
            let text = Self.text(data)
            return text.contains("\"type\":\"ready\"") && text.contains("\"open\"")
        }
        let start = Self.text(opened)
        #expect(isOpen, "\(start)")
        #expect(start.contains("\"inserted\":5"))
        try #require(isOpen)

        await server.post(as: bob, "<p>while watching</p>")
        let (changed, sawPost) = try await child.readOutput(timeout: .seconds(50)) { data in
            Self.text(data).contains("\"detail\":\"home: 1 new\"")
        }
        #expect(sawPost, "\(Self.text(changed))")
        try #require(sawPost)

        child.signal(signalNumber)
        let (rest, _) = try await child.readOutput(timeout: .seconds(20)) { _ in false }
        let name = signalNumber == SIGINT ? "SIGINT" : "SIGTERM"
        #expect(Self.text(rest).contains("\"signal\":\"\(name)\""))
        #expect(await child.waitForExit(timeout: .seconds(20)) == .exited(0))
        let everything = start + Self.text(changed) + Self.text(rest)
        #expect(!everything.contains("alice-sandbox-token"))
    }
}
