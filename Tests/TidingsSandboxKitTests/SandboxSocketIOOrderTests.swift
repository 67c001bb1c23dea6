import Foundation
import Testing
import TidingsCore
import TidingsNet
import TidingsSandboxKit

/// The kit's Socket.IO server starts a socket's handlers in the order its events arrived, after its
/// `onConnect`, and tells `onDisconnect` last: two chat messages sent back to back are stored in the
/// order they were sent, as a Socket.IO server does.
@Suite(.timeLimit(.minutes(1))) struct SandboxSocketIOOrderTests {
    /// A `/` namespace that reports `connect` (after yielding many times, so a handler racing it would
    /// run first), each `note`'s argument, and `disconnect`.
    static func makeServer() -> (SandboxSocketIOServer, AsyncStream<String>) {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        var root = SandboxSocketIOServer.Namespace()
        root.onConnect = { _ in
            for _ in 0..<200 { await Task.yield() }
            continuation.yield("connect")
        }
        root.events["note"] = { _, arguments in
            continuation.yield(arguments.first?.stringValue ?? "?")
            return []
        }
        root.onDisconnect = { _ in continuation.yield("disconnect") }
        return (SandboxSocketIOServer(namespaces: ["/": root]), stream)
    }

    @Test(arguments: SandboxSocketIOTests.allTransports)
    func eventsRunInArrivalOrderBetweenConnectAndDisconnect(_ transports: EngineIOClient.Transports) async throws {
        let (server, reports) = Self.makeServer()
        let listener = try server.serve()
        defer { listener.stop() }
        let client = SocketIOClient(url: listener.url, transports: transports)
        try await client.connect()
        let sent = (0..<300).map { "note \($0)" }
        for note in sent { try await client.emit("note", .string(note)) }
        await client.disconnect()
        var seen: [String] = []
        for await report in reports {
            seen.append(report)
            if report == "disconnect" { break }
        }
        #expect(seen == ["connect"] + sent + ["disconnect"])
    }

    @Test func aDelayedEventHoldsOnlyItsOwnAnswer() async throws {
        let clock = TestClock()
        var root = SandboxSocketIOServer.Namespace()
        root.events["echo"] = { _, arguments in arguments }
        let server = SandboxSocketIOServer(
            namespaces: ["/": root],
            configuration: .init(pingInterval: .seconds(1_000), pingTimeout: .seconds(1_000), clock: clock))
        server.faults.add(.delay(.seconds(30)), on: .event("echo"), times: 1)
        let listener = try server.serve()
        defer { listener.stop() }
        let client = SocketIOClient(url: listener.url, transports: .webSocket)
        try await client.connect()
        let sleepersBefore = clock.pendingSleepers
        let slow = Task { try await client.emitWithAck("echo", "slow", timeout: .seconds(50)) }
        #expect(await clock.waitForSleepers(sleepersBefore + 1))
        #expect(try await client.emitWithAck("echo", "fast") == ["fast"])
        await clock.advance(by: .seconds(30))
        #expect(try await slow.value == ["slow"])
        await client.disconnect()
    }
}
