import Foundation
import Testing
import TidingsCore
import TidingsNet
import TidingsSandbox

@testable import TidingsOpenMates

/// Both keep-alives: the WebSocket-level ping every 25 s the transport configures, and the app-level `ping`
/// the server sends, which the client answers with `pong`.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesKeepAliveTests {
    @Test func theServersPingIsAnsweredWithAPong() async throws {
        let harness = try OpenMatesClientHarness()
        await harness.server.seed(parents: 2)
        await harness.client.start()
        #expect(await harness.untilSynced())
        #expect(await harness.received("pong").isEmpty)
        #expect(await harness.server.push("ping") == 1)
        #expect(await eventually { await harness.received("pong").count == 1 })
        #expect(await harness.client.traffic.received["ping"] == 1)
        #expect(await harness.client.traffic.sent["pong"] == 1)
        // The answer is no app ping of the client's own: none is due before 25 s on the clock.
        #expect(await harness.received("ping").isEmpty)
        await harness.server.push("ping")
        #expect(await eventually { await harness.received("pong").count == 2 })
        #expect(await harness.client.status.connectionStatus == .connected)
        await harness.client.close()
    }

    /// On a raw loopback socket, with the transport's default configuration on a TestClock: no WebSocket ping
    /// before 25 s, one at 25 s (what follows a ping, pong deadline and the next one, is TidingsNet's, tested there).
    @Test func theTransportsDefaultSendsAWebSocketPingAt25SecondsOnLoopback() async throws {
        let listener = try TCPListener.bind()
        defer { listener.close() }
        let clock = TestClock()
        let origin = try #require(URL(string: "ws://127.0.0.1:\(listener.port)"))
        var configuration = try OpenMatesWebSocketTransport(origin: origin, sessionID: "s", credential: nil)
            .configuration
        configuration.clock = clock
        let transport = try OpenMatesWebSocketTransport(
            origin: origin, sessionID: "s", credential: .token("tok-SECRET"), configuration: configuration)
        async let accepted = Self.acceptUpgrade(listener)
        let channel = try await transport.connect()
        let peer = try await accepted

        // The ping is due at 25 s: at 24 s the next frame on the wire is the client's own text.
        #expect(await clock.waitForSleepers(1))
        await clock.advance(by: .seconds(24))
        try await channel.send("marker")
        let marker = try await peer.nextFrame()
        #expect(marker?.opcode == .text)
        #expect(marker.map { String(decoding: $0.payload, as: UTF8.self) } == "marker")
        await clock.advance(by: .seconds(1))
        #expect(try await peer.nextFrame()?.opcode == .ping)
        // The peer goes first: a close handshake with a peer that never answers would wait on the test's clock.
        peer.connection.close()
        await channel.close()
    }

    /// The server end of one raw WebSocket connection: frames read with a deadline of 10 s each.
    private struct RawPeer: Sendable {
        let connection: TCPConnection
        let decoder: LockedState<WebSocketFrameDecoder>

        func nextFrame() async throws -> WebSocketFrame? {
            while true {
                if let frame = try decoder.withLock({ try $0.nextFrame() }) { return frame }
                let bytes = try await withDeadline(.seconds(10)) { try await connection.read() }
                guard let bytes, !bytes.isEmpty else { return nil }
                decoder.withLock { $0.append(bytes) }
            }
        }
    }

    private static func acceptUpgrade(_ listener: TCPListener) async throws -> RawPeer {
        guard let connection = try await withDeadline(.seconds(10), { try await listener.accept() }) else {
            throw OpenMatesError.connectionLost
        }
        var buffer: [UInt8] = []
        while buffer.firstRange(of: Array("\r\n\r\n".utf8)) == nil {
            guard let bytes = try await withDeadline(.seconds(10), { try await connection.read() }), !bytes.isEmpty
            else { throw OpenMatesError.connectionLost }
            buffer += bytes
        }
        let head = String(decoding: buffer, as: UTF8.self)
        // The token is in the request line's query, as the server reads it.
        #expect(head.hasPrefix("GET /v1/ws?sessionId=s&token=tok-SECRET HTTP/1.1\r\n"))
        let key =
            head.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix("sec-websocket-key:") }
            .map { String($0.dropFirst("sec-websocket-key:".count)).trimmingCharacters(in: .whitespaces) } ?? ""
        let response =
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: \(WebSocketServerHandshake.acceptValue(for: key))\r\n\r\n"
        try await connection.write(Array(response.utf8))
        return RawPeer(connection: connection, decoder: LockedState(WebSocketFrameDecoder(role: .server)))
    }

    @Test func theWebSocketTransportPingsEvery25SecondsUnlessConfiguredOtherwise() throws {
        let origin = try #require(URL(string: "wss://api.example.org"))
        let transport = try OpenMatesWebSocketTransport(origin: origin, sessionID: "s", credential: nil)
        #expect(transport.configuration.pingInterval == .seconds(25))
        var custom = WebSocket.Configuration(pingInterval: .seconds(5))
        custom.connectTimeout = .seconds(3)
        let configured = try OpenMatesWebSocketTransport(
            origin: origin, sessionID: "s", credential: nil, configuration: custom)
        #expect(configured.configuration.pingInterval == .seconds(5))
        #expect(configured.configuration.connectTimeout == .seconds(3))
    }
}

/// Runs `body`, giving up with nil after `timeout` on the continuous clock (a network deadline for the raw peer).
private func withDeadline<T: Sendable>(_ timeout: Duration, _ body: @escaping @Sendable () async throws -> T)
    async throws -> T?
{
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        return try await group.next() ?? nil
    }
}
