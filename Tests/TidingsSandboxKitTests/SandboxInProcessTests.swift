import Foundation
import Testing
import TidingsNet
import TidingsSandboxKit

/// The same servers reached in process: in-memory WebSocket pairs and Socket.IO without a socket.
@Suite(.timeLimit(.minutes(1))) struct SandboxInProcessTests {
    @Test func inMemoryWebSocketRunsTheSameHandlerAuthorizationAndFaults() async throws {
        let server = try LoopbackWebSocketServer(
            authorize: { $0.headers["authorization"] == "Bearer ok" },
            handler: { request, connection in
                do {
                    for try await message in connection.messages {
                        if case .text(let text) = message {
                            try await connection.send(text: "\(request.target) \(text)")
                        }
                    }
                } catch {}
            })
        defer { server.stop() }
        let socket = try await server.connectInProcess(target: "/feed?x=1", headers: ["Authorization": "Bearer ok"])
        try socket.send(.text("hi"))
        var iterator = socket.messages.makeAsyncIterator()
        #expect(try await iterator.next() == .text("/feed?x=1 hi"))
        socket.close()

        await #expect(throws: WebSocketError.self) { _ = try await server.connectInProcess(target: "/feed") }
        server.faults.add(.tooManyRequests(retryAfterSeconds: 5), on: .path("/feed"), times: 1)
        do {
            _ = try await server.connectInProcess(target: "/feed", headers: ["Authorization": "Bearer ok"])
            Issue.record("the upgrade was accepted")
        } catch let error as WebSocketError {
            #expect(error.httpStatus == 429)
        }
        server.faults.add(.close(code: 4003), on: .path("/feed"), times: 1)
        let closed = try await server.connectInProcess(target: "/feed", headers: ["Authorization": "Bearer ok"])
        for try await _ in closed.messages {}
        #expect(closed.closeCode == WebSocketCloseCode(rawValue: 4003))
        #expect(server.log.entries.map(\.status) == [101, 401, 429, 101])
    }

    @Test(arguments: SandboxSocketIOTests.allTransports)
    func socketIOClientReachesTheServerWithNoSocket(_ transports: EngineIOClient.Transports) async throws {
        let server = SandboxSocketIOTests.makeServer()
        let client = SocketIOClient(connector: server.inProcessConnector(transports: transports))
        try await client.connect()
        #expect(try await client.emitWithAck("echo", "in", ["process": true]) == ["in", ["process": true]])
        #expect(try await client.emitWithAck("binary", .binary([1, 2, 3])) == [3, .binary([3, 2, 1])])
        if transports == .pollingThenWebSocket {
            #expect(try await SandboxSocketIOTests.eventually { await client.activeTransport == .webSocket })
        } else {
            #expect(await client.activeTransport == (transports == .polling ? .polling : .webSocket))
        }
        #expect(try await client.emitWithAck("echo", "after") == ["after"])
        await client.disconnect()
        server.http.closeInProcessConnections()
    }
}
