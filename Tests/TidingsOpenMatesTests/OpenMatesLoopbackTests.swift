import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsNet
import TidingsSandbox

@testable import TidingsOpenMates

/// The client over a real loopback WebSocket: the URL carries the session ID only, the credential travels
/// in a header, a refused login fails the connect, and nothing secret reaches the log.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesLoopbackTests {
    static let token = "tok-SECRET-4711"

    @Test(arguments: ["token", "cookie"])
    func syncsOverLoopbackWithTheCredentialInAHeader(credential: String) async throws {
        let server = OpenMatesSandboxServer(token: Self.token)
        await server.seed(parents: 12, messagesEach: 2)
        let endpoint = try OpenMatesSandboxWebSocketServer(server: server)
        defer { endpoint.stop() }
        let transport = try OpenMatesWebSocketTransport(
            origin: endpoint.origin, sessionID: "6f1c2f7e-session",
            credential: credential == "token" ? .token(Self.token) : .cookie("auth_refresh_token=\(Self.token)"))
        #expect(transport.url.absoluteString == "ws://127.0.0.1:\(endpoint.port)/v1/ws?sessionId=6f1c2f7e-session")
        let logs = LogCollector()
        let client = OpenMatesClient(
            transport: transport, store: try OpenMatesStore.inMemory(), clock: TestClock(),
            logger: TidingsLogger(subsystem: "test", minimumLevel: .debug, sink: logs.append))
        let changes = client.changes()
        await client.start()
        for await change in changes {
            if case .status(let status) = change, status.sync == .complete { break }
        }
        #expect(try client.store.chatList().count == 12)
        await client.close()
        #expect(!logs.messages.joined().contains("SECRET"))
        #expect(!endpoint.log.entries.map(\.description).joined().contains("SECRET"))
    }

    @Test func aRefusedLoginFailsTheConnectWithoutNamingTheCredential() async throws {
        let server = OpenMatesSandboxServer(token: Self.token)
        let endpoint = try OpenMatesSandboxWebSocketServer(server: server)
        defer { endpoint.stop() }
        let transport = try OpenMatesWebSocketTransport(
            origin: endpoint.origin, sessionID: "s", credential: .token("wrong-SECRET"))
        do {
            _ = try await transport.connect()
            Issue.record("a wrong token connected")
        } catch {
            #expect(!"\(error)".contains("SECRET"))
        }
        let noSession = try OpenMatesWebSocketTransport(
            origin: endpoint.origin, sessionID: "", credential: .token(Self.token))
        await #expect(throws: (any Error).self) { _ = try await noSession.connect() }
        #expect(await server.connectionsAccepted == 0)
    }
}
