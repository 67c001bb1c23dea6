import Foundation
import Testing
import TidingsNet
import TidingsSandboxKit

/// One port for a WebSocket and HTTP, as a server with one API origin serves both, and the refusal status a
/// server chooses for a login it does not accept.
@Suite(.timeLimit(.minutes(1))) struct LoopbackWebSocketSharedPortTests {
    @Test func plainRequestsGoToTheHTTPServerAndUpgradesToTheSocket() async throws {
        let http = SandboxHTTPServer(router: SandboxTestRoutes.router())
        let server = try LoopbackWebSocketServer(http: http) { _, connection in
            try? await connection.send(text: "socket")
        }
        defer { server.stop() }
        let client = HTTPClient()
        let plain = try await client.decode(
            [String: String].self,
            from: HTTPRequest(url: URL(string: "http://127.0.0.1:\(server.port)/api/v1/statuses/9?q=x")!))
        #expect(plain == ["id": "9", "q": "x"])
        #expect(http.log.entries.map(\.path) == ["/api/v1/statuses/9"])
        let socket = try await WebSocket.connect(
            to: URL(string: "ws://127.0.0.1:\(server.port)/stream")!, configuration: .init(pingInterval: nil))
        var iterator = socket.messages.makeAsyncIterator()
        #expect(try await iterator.next() == .text("socket"))
        await socket.close()
        #expect(server.log.entries.map(\.status) == [101])
    }

    @Test func withoutAnHTTPServerAPlainRequestIs400() async throws {
        let server = try LoopbackWebSocketServer { _, _ in }
        defer { server.stop() }
        let response = try await HTTPClient().response(
            for: HTTPRequest(url: URL(string: "http://127.0.0.1:\(server.port)/api")!))
        #expect(response.status == 400)
    }

    @Test func aRefusedUpgradeGetsTheChosenStatusOnASocketAndInProcess() async throws {
        let server = try LoopbackWebSocketServer(refusal: 403, authorize: { _ in false }) { _, _ in }
        defer { server.stop() }
        await #expect {
            _ = try await WebSocket.connect(
                to: URL(string: "ws://127.0.0.1:\(server.port)/stream")!, configuration: .init(pingInterval: nil))
        } throws: { ($0 as? WebSocketError)?.httpStatus == 403 }
        await #expect {
            _ = try await server.connectInProcess(target: "/stream")
        } throws: { ($0 as? WebSocketError)?.httpStatus == 403 }
        #expect(server.log.entries.map(\.status) == [403, 403])
    }
}
