import Foundation
import Testing
import TidingsCore
import TidingsNet
import TidingsSandboxKit

/// The kit's Socket.IO server tells a namespace when a client's socket goes away: a disconnect packet,
/// or the connection ending without one (a network failure, an app killed).
@Suite(.timeLimit(.minutes(1))) struct SandboxSocketIODisconnectTests {
    /// A server whose `/` namespace reports connects and disconnects by socket id, in order.
    static func makeServer() -> (SandboxSocketIOServer, AsyncStream<String>) {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        var root = SandboxSocketIOServer.Namespace()
        root.onConnect = { continuation.yield("connect \($0.id)") }
        root.onDisconnect = { continuation.yield("disconnect \($0.id)") }
        return (SandboxSocketIOServer(namespaces: ["/": root]), stream)
    }

    @Test func aClientsDisconnectPacketRunsTheHookOnce() async throws {
        let (server, reports) = Self.makeServer()
        let listener = try server.serve()
        defer { listener.stop() }
        var iterator = reports.makeAsyncIterator()
        let client = SocketIOClient(url: listener.url, transports: .webSocket)
        try await client.connect()
        let connected = try #require(await iterator.next())
        await client.disconnect()
        let id = String(connected.dropFirst("connect ".count))
        #expect(await iterator.next() == "disconnect \(id)")
        // A second client's whole life comes next; nothing more arrived for the first.
        let second = SocketIOClient(url: listener.url, transports: .webSocket)
        try await second.connect()
        #expect(await iterator.next()?.hasPrefix("connect ") == true)
        await second.disconnect()
        #expect(await iterator.next()?.hasPrefix("disconnect ") == true)
    }

    @Test func aConnectionEndingWithoutADisconnectPacketRunsTheHook() async throws {
        let (server, reports) = Self.makeServer()
        let listener = try server.serve()
        defer { listener.stop() }
        var iterator = reports.makeAsyncIterator()
        var components = try #require(URLComponents(url: listener.url, resolvingAgainstBaseURL: false))
        components.scheme = "ws"
        components.path = "/socket.io/"
        components.query = "EIO=4&transport=websocket"
        let socket = try await WebSocket.connect(to: try #require(components.url))
        var messages = socket.messages.makeAsyncIterator()
        #expect(try await messages.next().map(Self.text)?.hasPrefix("0{") == true)  // Engine.IO open
        try await socket.send(text: "40")
        #expect(try await messages.next().map(Self.text)?.hasPrefix("40{") == true)  // Socket.IO connect
        let connected = try #require(await iterator.next())
        // Gone without `41` or an Engine.IO close: the server only sees the WebSocket end.
        await socket.close()
        #expect(await iterator.next() == "disconnect \(connected.dropFirst("connect ".count))")
    }

    private static func text(_ message: WebSocketMessage) -> String {
        if case .text(let text) = message { return text }
        return ""
    }
}
