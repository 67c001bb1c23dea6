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

    /// A `variant` sandbox on a loopback port where alice follows bob, who posted `posts` statuses.
    static func serve(_ variant: MastodonSandboxVariant = .mastodon, posts: Int) async throws
        -> (server: MastodonSandboxServer, bob: String, listener: SandboxHTTPListener)
    {
        let server = MastodonSandboxServer(variant: variant)
        let alice = await server.addAccount(username: "alice", token: "alice-sandbox-token")
        let bob = await server.addAccount(username: "bob", token: "bob-sandbox-token")
        await server.follow(alice, bob)
        for index in 0..<posts { await server.post(as: bob, "<p>before \(index)</p>") }
        return (server, bob, try server.httpServer().serve())
    }

    /// `tidings mastodon watch --json` as alice on `server` (`extra` arguments after the store).
    static func watch(_ server: URL, store: String, _ extra: [String] = []) throws -> ChildProcess {
        var environment = ProcessInfo.processInfo.environment
        environment["TIDINGS_MASTODON_TOKEN"] = "alice-sandbox-token"
        return try ChildProcess.spawn(
            executable: ToolRun.executable.path,
            arguments: ["mastodon", "watch", "--server", server.absoluteString, "--store", store] + extra + ["--json"],
            environment: environment, standardError: .nullDevice)
    }

    @Test(arguments: [SIGINT, SIGTERM])
    func watchPrintsANewPostFromTheStreamAndStopsCleanlyOnASignal(_ signalNumber: Int32) async throws {
        let (server, bob, listener) = try await Self.serve(posts: 5)
        defer { listener.stop() }
        let child = try Self.watch(listener.url, store: try MastodonCommandTests.temporaryStore())
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

    /// Reads until `text` was printed; the child is killed at the end of the test either way.
    static func read(_ child: ChildProcess, until text: String, seconds: Int = 50) async throws -> (String, Bool) {
        let (data, found) = try await child.readOutput(timeout: .seconds(seconds)) { Self.text($0).contains(text) }
        return (Self.text(data), found)
    }

    @Test func withoutAServerItWatchesTheInProcessSandboxOverItsStream() async throws {
        let store = try MastodonCommandTests.temporaryStore()
        let child = try ChildProcess.spawn(
            executable: ToolRun.executable.path, arguments: ["mastodon", "watch", "--store", store, "--json"],
            standardError: .nullDevice)
        defer { child.signal(SIGKILL) }
        let (start, ready) = try await child.readOutput(timeout: .seconds(50)) { data in
            let text = Self.text(data)
            return text.contains("\"type\":\"ready\"") && text.contains("\"open\"")
        }
        let text = Self.text(start)
        #expect(ready, "\(text)")
        try #require(ready)
        // The sample sandbox's home was stored in this run, and the in-process stream opened.
        let readyLine = try #require(text.split(separator: "\n").first { $0.contains("\"type\":\"ready\"") })
        let object = try MastodonCommandTests.object(readyLine)
        #expect(object["target"] as? String == "sandbox")
        #expect((object["inserted"] as? Int ?? 0) > 0, "\(readyLine)")
        child.signal(SIGINT)
        let (rest, stopped) = try await Self.read(child, until: "\"signal\":\"SIGINT\"", seconds: 20)
        #expect(stopped, "\(rest)")
        #expect(await child.waitForExit(timeout: .seconds(20)) == .exited(0))
        let show = try await ChildProcess.run(
            executable: ToolRun.executable.path, arguments: ["mastodon", "show", "--store", store, "--limit", "1"],
            timeout: .seconds(30))
        #expect(show.termination == .exited(0))
        #expect(Self.text(show.standardOutput).contains("0 gap(s)"), "\(Self.text(show.standardOutput))")
    }

    @Test func aServerWithoutStreamingIsWatchedByPolling() async throws {
        // Nextcloud Social offers no streaming: the watch polls on the table (30 s for the active account while
        // interacting) and still prints a post made on the server.
        let (server, bob, listener) = try await Self.serve(.nextcloud, posts: 3)
        defer { listener.stop() }
        let child = try Self.watch(listener.url, store: try MastodonCommandTests.temporaryStore())
        defer { child.signal(SIGKILL) }
        let (start, ready) = try await Self.read(child, until: "\"type\":\"ready\"")
        #expect(ready, "\(start)")
        try #require(ready)
        #expect(start.contains("\"inserted\":3"), "\(start)")
        #expect(!start.contains("\"stream\":\"open\""), "\(start)")

        await server.post(as: bob, "<p>while polling</p>")
        let (changed, sawPost) = try await Self.read(child, until: "\"detail\":\"home: 1 new\"", seconds: 90)
        #expect(sawPost, "\(changed)")
        #expect(!(start + changed).contains("\"kind\":\"stream\",\"detail\":\"open\""))
        child.signal(SIGTERM)
        #expect(await child.waitForExit(timeout: .seconds(20)) == .exited(0))
        #expect(!(start + changed).contains("alice-sandbox-token"))
    }
}
