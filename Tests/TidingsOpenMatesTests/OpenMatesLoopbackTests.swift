import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsNet
import TidingsSandbox

@testable import TidingsOpenMates

/// The client over a real loopback WebSocket: the token travels in the upgrade's query as the server reads it
/// (`/v1/ws?sessionId=…&token=…`), the cookie in its header; a refused login fails the connect, and the token
/// never reaches a log, an error or what the transport shows of itself.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesLoopbackTests {
    static let token = "tok-SECRET-4711"

    @Test(arguments: ["token", "cookie"])
    func syncsOverLoopbackWithTheTokenInTheQueryOrTheCookieInAHeader(credential: String) async throws {
        let server = OpenMatesSandboxServer(token: Self.token)
        await server.seed(parents: 12, messagesEach: 2)
        let endpoint = try OpenMatesSandboxWebSocketServer(server: server)
        defer { endpoint.stop() }
        let transport = try OpenMatesWebSocketTransport(
            origin: endpoint.origin, sessionID: "6f1c2f7e-session",
            credential: credential == "token" ? .token(Self.token) : .cookie("auth_refresh_token=\(Self.token)"))
        #expect(transport.url.absoluteString == "ws://127.0.0.1:\(endpoint.port)/v1/ws?sessionId=6f1c2f7e-session")
        if credential == "token" {
            #expect(
                transport.requestURL.absoluteString
                    == "ws://127.0.0.1:\(endpoint.port)/v1/ws?sessionId=6f1c2f7e-session&token=\(Self.token)")
            #expect(transport.credentialHeaders.isEmpty)
        } else {
            #expect(transport.requestURL == transport.url)
            #expect(transport.credentialHeaders.map(\.name) == ["Cookie"])
        }
        var dumped = ""
        dump(transport, to: &dumped)
        for shown in ["\(transport)", String(reflecting: transport), dumped] { #expect(!shown.contains("SECRET")) }
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

    /// The real server reads the token from the query only: a bearer header, or the token under another name,
    /// is no login, and the sandbox refuses it at the handshake as the server would.
    @Test func theSandboxRefusesWhatTheServerWouldNotRead() async throws {
        let server = OpenMatesSandboxServer(token: Self.token)
        let endpoint = try OpenMatesSandboxWebSocketServer(server: server)
        defer { endpoint.stop() }
        var bearer = WebSocket.Configuration(pingInterval: nil)
        bearer.headers = [(name: "Authorization", value: "Bearer \(Self.token)")]
        let headerOnly = try OpenMatesWebSocketTransport(
            origin: endpoint.origin, sessionID: "s", credential: nil, configuration: bearer)
        await #expect(throws: WebSocketError.self) { _ = try await headerOnly.connect() }
        let misnamed = try #require(URL(string: "\(endpoint.origin)/v1/ws?sessionId=s&access_token=\(Self.token)"))
        await #expect(throws: WebSocketError.self) {
            _ = try await WebSocket.connect(to: misnamed, configuration: .init(pingInterval: nil))
        }
        let cookieAsToken = try OpenMatesWebSocketTransport(
            origin: endpoint.origin, sessionID: "s", credential: .cookie("other=\(Self.token)"))
        await #expect(throws: WebSocketError.self) { _ = try await cookieAsToken.connect() }
        #expect(await server.connectionsAccepted == 0)
        // In process the same: the query token is accepted, a bearer header is not.
        await #expect(throws: (any Error).self) {
            _ = try await endpoint.inProcessTransport(headers: ["Authorization": "Bearer \(Self.token)"]).connect()
        }
        let channel = try await endpoint.inProcessTransport(token: Self.token).connect()
        // The sandbox opens its side when its handler runs, just after the upgrade.
        #expect(await eventually { await server.connectionsAccepted == 1 })
        await channel.close()
    }

    @Test func aTokenWithReservedCharactersArrivesAsItIs() async throws {
        let token = "a+b/c=d&e SECRET"
        let server = OpenMatesSandboxServer(token: token)
        let endpoint = try OpenMatesSandboxWebSocketServer(server: server)
        defer { endpoint.stop() }
        let transport = try OpenMatesWebSocketTransport(
            origin: endpoint.origin, sessionID: "s", credential: .token(token))
        let channel = try await transport.connect()
        #expect(await eventually { await server.connectionsAccepted == 1 })
        await channel.close()
        #expect(!transport.url.absoluteString.contains("SECRET"))
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
            #expect(!String(reflecting: error).contains("SECRET"))
            // The real server's refusal: 403 at the handshake (seeds README), not the kit's default 401.
            #expect((error as? WebSocketError)?.httpStatus == 403)
        }
        await #expect {
            _ = try await endpoint.inProcessTransport(token: "wrong-SECRET").connect()
        } throws: { ($0 as? WebSocketError)?.httpStatus == 403 }
        let noSession = try OpenMatesWebSocketTransport(
            origin: endpoint.origin, sessionID: "", credential: .token(Self.token))
        await #expect(throws: (any Error).self) { _ = try await noSession.connect() }
        #expect(await server.connectionsAccepted == 0)
    }
}
