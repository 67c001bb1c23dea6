import Foundation
import Testing
import TidingsNet
import TidingsSandboxKit

/// The kit's WebSocket server with the shared fault switches, seen by our WebSocket client.
@Suite(.timeLimit(.minutes(1))) struct LoopbackWebSocketFaultTests {
    private func echoServer() throws -> LoopbackWebSocketServer {
        try LoopbackWebSocketServer { _, connection in
            do {
                for try await message in connection.messages {
                    if case .text(let text) = message { try await connection.send(text: "echo \(text)") }
                }
            } catch {}
        }
    }

    private let configuration = WebSocket.Configuration(pingInterval: nil)

    private func url(_ server: LoopbackWebSocketServer, _ path: String = "/stream") -> URL {
        URL(string: "ws://127.0.0.1:\(server.port)\(path)")!
    }

    @Test func echoesAndLogsTheUpgrade() async throws {
        let server = try echoServer()
        defer { server.stop() }
        let socket = try await WebSocket.connect(to: url(server, "/stream?token=secret"), configuration: configuration)
        try await socket.send(text: "hi")
        var iterator = socket.messages.makeAsyncIterator()
        #expect(try await iterator.next() == .text("echo hi"))
        await socket.close()
        let entry = try #require(server.log.entries.first)
        #expect(entry.method == "WS")
        #expect(entry.path == "/stream")
        #expect(entry.status == 101)
        #expect(entry.bytesIn > 0 && entry.bytesOut > 0)
    }

    @Test func errorStatusAnd429RefuseTheUpgrade() async throws {
        let server = try echoServer()
        defer { server.stop() }
        server.faults.add(.status(503), on: .path("/stream"), times: 1)
        server.faults.add(.tooManyRequests(retryAfterSeconds: 9), on: .path("/stream"), times: 1)
        for expected in [503, 429] {
            do {
                _ = try await WebSocket.connect(to: url(server), configuration: configuration)
                Issue.record("the upgrade was accepted")
            } catch let error as WebSocketError {
                #expect(error == .handshakeFailed)
                #expect(error.httpStatus == expected)
            }
        }
        #expect(server.log.entries.map(\.status) == [503, 429])
        #expect(server.log.entries.map(\.fault) == ["status 503", "429 retry-after 9"])
        // Spent: the next upgrade is accepted.
        let socket = try await WebSocket.connect(to: url(server), configuration: configuration)
        await socket.close()
    }

    @Test func closeWithACodeAndDropAfterTheUpgrade() async throws {
        let server = try echoServer()
        defer { server.stop() }
        server.faults.add(.close(code: 4001), on: .path("/stream"), times: 1)
        let closed = try await WebSocket.connect(to: url(server), configuration: configuration)
        do { for try await _ in closed.messages {} } catch {}
        #expect(closed.closeStatus?.code == WebSocketCloseCode(rawValue: 4001))

        server.faults.add(.dropMidResponse, on: .path("/stream"), times: 1)
        let dropped = try await WebSocket.connect(to: url(server), configuration: configuration)
        await #expect(throws: WebSocketError.self) { for try await _ in dropped.messages {} }
        #expect(dropped.closeStatus == nil)
    }

    @Test func neverAnswerHoldsTheUpgradeUntilTheClientsDeadline() async throws {
        let server = try echoServer()
        defer { server.stop() }
        server.faults.add(.neverAnswer, on: .path("/stream"), times: 1)
        var patient = configuration
        patient.connectTimeout = .seconds(1)
        await #expect(throws: WebSocketError.self) {
            _ = try await WebSocket.connect(to: url(server), configuration: patient)
        }
        #expect(server.log.entries.allSatisfy { $0.status != 101 })
    }
}
