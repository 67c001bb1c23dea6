import Foundation
import Testing
import TidingsCore
import TidingsNet
import TidingsSandboxKit

/// The kit's Socket.IO server on loopback, driven by our own ``SocketIOClient`` over every transport.
@Suite(.timeLimit(.minutes(1))) struct SandboxSocketIOTests {
    static let allTransports: [EngineIOClient.Transports] = [.polling, .pollingThenWebSocket, .webSocket]

    /// `/` echoes and reverses binary; `/chat` needs `{"token": "t"}` and asks the client a question on connect.
    static func makeServer() -> SandboxSocketIOServer {
        var root = SandboxSocketIOServer.Namespace()
        root.events["echo"] = { _, arguments in arguments }
        root.events["binary"] = { _, arguments in
            let bytes = arguments.first?.binaryValue ?? []
            return [.int(Int64(bytes.count)), .binary(bytes.reversed())]
        }
        var chat = SandboxSocketIOServer.Namespace()
        chat.authorize = { $0?["token"]?.stringValue == "t" }
        chat.events["ask"] = { socket, arguments in
            let reply = try? await socket.emitWithAck("question", arguments, timeout: .seconds(10))
            return reply ?? ["no answer"]
        }
        return SandboxSocketIOServer(namespaces: ["/": root, "/chat": chat])
    }

    /// Re-checks `condition` until it holds; a guard against hanging on real network progress, not a schedule.
    static func eventually(_ condition: @Sendable () async -> Bool) async throws -> Bool {
        for _ in 0..<1_000 {
            if await condition() { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return await condition()
    }

    @Test(arguments: allTransports)
    func acksAndBinaryOverEveryTransport(_ transports: EngineIOClient.Transports) async throws {
        let server = Self.makeServer()
        let listener = try server.serve()
        defer { listener.stop() }
        let client = SocketIOClient(url: listener.url, transports: transports)
        try await client.connect()
        let arguments: [JSONValue] = [1, "two", ["three": [3.5, nil, true]], "é🎉"]
        #expect(try await client.emitWithAck("echo", arguments: arguments) == arguments)
        if transports == .pollingThenWebSocket {
            #expect(try await Self.eventually { await client.activeTransport == .webSocket })
        } else {
            #expect(await client.activeTransport == (transports == .polling ? .polling : .webSocket))
        }
        let large = (0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        #expect(try await client.emitWithAck("binary", .binary(large)) == [65_536, .binary(large.reversed())])
        #expect(try await client.emitWithAck("echo", "after") == ["after"])
        await client.disconnect()
        #expect(server.log.entries.filter { $0.method == "EVENT" }.map(\.path) == ["/ echo", "/ binary", "/ echo"])
    }

    @Test func namespacesAuthAndServerAcksAnsweredByTheClient() async throws {
        let server = Self.makeServer()
        let listener = try server.serve()
        defer { listener.stop() }
        let stranger = SocketIOClient(url: listener.url, transports: .webSocket)
        await #expect(throws: SocketIOError.connectRefused) { try await stranger.connect(namespace: "/chat") }
        let lost = SocketIOClient(url: listener.url, transports: .webSocket)
        await #expect(throws: SocketIOError.connectRefused) { try await lost.connect(namespace: "/nowhere") }

        let client = SocketIOClient(url: listener.url, transports: .pollingThenWebSocket)
        let answering = Task {
            for await event in client.events {
                if case .event("question", let arguments, let ack?) = event {
                    await ack(.string("answer to \(arguments.first?.stringValue ?? "?")"))
                }
            }
        }
        defer { answering.cancel() }
        try await client.connect(namespace: "/chat", auth: ["token": "t"])
        #expect(try await client.emitWithAck("ask", "life") == ["answer to life"])
        await client.disconnect()
    }

    @Test func eventFaultsShapeTheAcks() async throws {
        let server = Self.makeServer()
        let listener = try server.serve()
        defer { listener.stop() }
        server.faults.add(.status(503), on: .event("echo"), times: 1)
        server.faults.add(.neverAnswer, on: .event("echo"), times: 1)
        let client = SocketIOClient(url: listener.url, transports: .webSocket)
        try await client.connect()
        #expect(try await client.emitWithAck("echo", "x") == [["error": 503]])
        await #expect(throws: SocketIOError.ackTimeout) {
            _ = try await client.emitWithAck("echo", "x", timeout: .milliseconds(300))
        }
        #expect(try await client.emitWithAck("echo", "y") == ["y"])
        await client.disconnect()
    }

    @Test func pollingRefusesUnknownSessionsAndOldProtocols() async throws {
        let server = Self.makeServer()
        let unknown = await server.http.handle(
            SandboxHTTPRequest(method: "GET", target: "/socket.io/?EIO=4&transport=polling&sid=nope"))
        #expect(unknown.status == 400)
        #expect(String(decoding: unknown.body, as: UTF8.self) == #"{"code":1,"message":"Session ID unknown"}"#)
        let old = await server.http.handle(
            SandboxHTTPRequest(method: "GET", target: "/socket.io/?EIO=3&transport=polling"))
        #expect(old.status == 400)
        let open = await server.http.handle(
            SandboxHTTPRequest(method: "GET", target: "/socket.io/?EIO=4&transport=polling"))
        let packets = try EngineIOPayload.decode(open.body)
        #expect(packets.first?.kind == .open)
        let handshake = try EngineIOHandshake(json: packets.first?.text ?? "")
        #expect(handshake.upgrades == ["websocket"])
        #expect(handshake.pingInterval == .seconds(25))
        #expect(server.engine.sessionCount == 1)
    }
}
