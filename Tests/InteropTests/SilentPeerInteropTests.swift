import Foundation
import PeerSupport
import Testing
import TidingsNet

/// Every transport against a real process that accepts TCP and never answers (Tests/Peers/silent_peer.py):
/// each handshake ends with a typed timeout within its configured limit, never waiting for TCP's own.
@Suite(.timeLimit(.minutes(1))) struct SilentPeerInteropTests {
    static let limit = Duration.seconds(1)

    private func silentPeer() async throws -> PythonPeer {
        try await PythonPeer.shared("silent_peer.py")
    }

    @Test(arguments: ["ws", "wss"])
    func aWebSocketHandshakeTimesOut(scheme: String) async throws {
        let peer = try await silentPeer()
        let configuration = WebSocket.Configuration(connectTimeout: Self.limit, pingInterval: nil)
        let error = await #expect(throws: WebSocketError.self) {
            _ = try await WebSocket.connect(
                to: URL(string: "\(scheme)://127.0.0.1:\(peer.port)/echo")!, configuration: configuration)
        }
        #expect(error == .timedOut)
    }

    @Test(arguments: [EngineIOClient.Transports.polling, .webSocket])
    func anEngineIOHandshakeTimesOut(transports: EngineIOClient.Transports) async throws {
        let peer = try await silentPeer()
        let connector = EngineIOClientConnector(
            configuration: EngineIOClient.Configuration(
                url: URL(string: "http://127.0.0.1:\(peer.port)")!, transports: transports, timeout: Self.limit))
        await #expect(throws: EngineIOError.timedOut) { _ = try await connector.connect() }
    }

    @Test func aSocketIOConnectTimesOutAndDoesNotReconnect() async throws {
        let peer = try await silentPeer()
        let connector = EngineIOClientConnector(
            configuration: EngineIOClient.Configuration(
                url: URL(string: "http://127.0.0.1:\(peer.port)")!, transports: .polling, timeout: Self.limit))
        let client = SocketIOClient(
            connector: connector, configuration: .init(reconnects: false, connectTimeout: Self.limit))
        await #expect(throws: EngineIOError.timedOut) { try await client.connect() }
        #expect(await !client.isConnected)
    }

    @Test func anHTTPSRequestTimesOut() async throws {
        let peer = try await silentPeer()
        let client = HTTPClient(configuration: .init(timeout: Self.limit))
        let error = await #expect(throws: HTTPError.self) {
            _ = try await client.send(HTTPRequest(url: URL(string: "https://127.0.0.1:\(peer.port)/")!))
        }
        #expect(error == .timedOut)
    }
}
