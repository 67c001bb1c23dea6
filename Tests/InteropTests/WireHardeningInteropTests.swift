import Foundation
import PeerSupport
import Testing
import TidingsNet

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The security guards and protocol details of issue 8 against the real peers: `websockets`
/// (Tests/Peers/ws_peer.py) and aiohttp (Tests/Peers/http_peer.py).
@Suite(.timeLimit(.minutes(2))) struct WireHardeningInteropTests {
    static let tlsFolder = PythonPeer.projectRoot.appendingPathComponent("Tests/Fixtures/tls")

    private func tlsPeer(certificate: String, key: String, extra: [String] = []) async throws -> PythonPeer {
        try await PythonPeer.start(
            "ws_peer.py",
            arguments: [
                "--tls-cert", Self.tlsFolder.appendingPathComponent(certificate).path,
                "--tls-key", Self.tlsFolder.appendingPathComponent(key).path,
            ] + extra)
    }

    private func trusting(_ authority: String) throws -> WebSocket.Configuration {
        var configuration = WebSocket.Configuration(connectTimeout: .seconds(20), pingInterval: nil)
        configuration.tls.additionalTrustedCertificates = [
            try String(contentsOf: Self.tlsFolder.appendingPathComponent(authority), encoding: .utf8)
        ]
        return configuration
    }

    // MARK: WebSocket

    @Test(arguments: [UInt16(1012), 1013, 1014])
    func registeredCloseCodesFromWebsocketsCloseCleanly(code: UInt16) async throws {
        let peer = try await PythonPeer.start("ws_peer.py")
        defer { peer.stop() }
        let socket = try await WebSocket.connect(
            to: URL(string: "ws://127.0.0.1:\(peer.port)/close/\(code)")!,
            configuration: .init(connectTimeout: .seconds(20), pingInterval: nil))
        var received: [WebSocketMessage] = []
        for try await message in socket.messages { received.append(message) }
        #expect(received == [.text("closing")])
        #expect(socket.closeStatus?.code.rawValue == code)
        #expect(socket.closeStatus?.reason == "server says bye")
    }

    @Test func aWebSocketHeaderOrSubprotocolWithCRLFNeverReachesTheServer() async throws {
        let peer = try await PythonPeer.start("ws_peer.py")
        defer { peer.stop() }
        let url = URL(string: "ws://127.0.0.1:\(peer.port)/headers")!
        for (headers, subprotocols) in [
            ([("Origin", "https://app.example\r\nInjected: yes")], [String]()),
            ([("Origin\r\nInjected", "yes")], []),
            ([], ["chat.v2\r\nInjected: yes"]),
        ] {
            var configuration = WebSocket.Configuration(connectTimeout: .seconds(20), pingInterval: nil)
            configuration.headers = headers
            configuration.subprotocols = subprotocols
            await #expect {
                _ = try await WebSocket.connect(to: url, configuration: configuration)
            } throws: { error in
                (error as? WebSocketError) == .handshakeFailed
            }
        }
        // A clean request still works against the same server.
        var configuration = WebSocket.Configuration(connectTimeout: .seconds(20), pingInterval: nil)
        configuration.headers = [("Origin", "https://app.example")]
        let socket = try await WebSocket.connect(to: url, configuration: configuration)
        var messages = socket.messages.makeAsyncIterator()
        guard case .text(let json)? = try await messages.next() else {
            Issue.record("no header report")
            return
        }
        let seen = try JSONDecoder().decode([String: String?].self, from: Data(json.utf8))
        #expect(seen["origin"] == "https://app.example")
        await socket.close()
    }

    @Test func anExpiredCertificateFailsVerification() async throws {
        let peer = try await tlsPeer(certificate: "expired.pem", key: "expired.key")
        defer { peer.stop() }
        do {
            _ = try await WebSocket.connect(
                to: URL(string: "wss://127.0.0.1:\(peer.port)/echo")!, configuration: try trusting("expired-ca.pem"))
            Issue.record("an expired certificate must not connect")
        } catch let error as WebSocketError {
            #expect(error.underlying == .certificateUntrusted)
            #expect(error.underlying?.detail?.contains("expired") == true)
        }
    }

    @Test func aServerOfferingOnlyTLS10Or11IsRefused() async throws {
        // The peer proves at start-up that it completes a TLS 1.1 handshake (or fails to start).
        let peer = try await tlsPeer(certificate: "server.pem", key: "server.key", extra: ["--tls-legacy-only"])
        defer { peer.stop() }
        do {
            _ = try await WebSocket.connect(
                to: URL(string: "wss://127.0.0.1:\(peer.port)/echo")!, configuration: try trusting("ca.pem"))
            Issue.record("TLS 1.0/1.1 must not connect")
        } catch let error as WebSocketError {
            #expect(error.underlying == .tlsHandshakeFailed)
        }
    }

    // MARK: Engine.IO

    @Test(arguments: [EngineIOClient.Transports.polling, .webSocket])
    func anEngineIOHeaderWithCRLFNeverReachesTheServer(_ transports: EngineIOClient.Transports) async throws {
        let server = try await PythonPeer.start("socketio_server.py")
        defer { server.stop() }
        for headers in [["X-Test": "a\r\nInjected: yes"], ["X-Test\r\nInjected": "yes"]] {
            let connector = EngineIOClientConnector(
                configuration: .init(url: server.url, transports: transports, headers: headers))
            await #expect {
                _ = try await connector.connect()
            } throws: { error in
                // Polling refuses the header in the pool, WebSocket in its handshake; both say why.
                let refused = (error as? EngineIOError) == .transportFailed || error is WebSocketError
                return refused && String(describing: error).contains("forbidden character")
            }
        }
        // The same server takes a clean header.
        let connector = EngineIOClientConnector(
            configuration: .init(url: server.url, transports: transports, headers: ["X-Test": "a"]))
        let session = try await connector.connect()
        await session.close()
    }

    // MARK: HTTP

    @Test func anHTTPHeaderOrTokenWithCRLFNeverReachesTheServer() async throws {
        let peer = try await PythonPeer.start("http_peer.py")
        defer { peer.stop() }
        let url = URL(string: "http://127.0.0.1:\(peer.port)/headers-raw")!
        let client = HTTPClient()
        for request in [
            HTTPRequest(url: url, headers: ["X-Test": "a\r\nInjected: yes"]),
            HTTPRequest(url: url, headers: ["X-Test\r\nInjected": "yes"]),
            HTTPRequest(url: url, bearerToken: "t0k\r\nInjected: yes"),
        ] {
            await #expect {
                _ = try await client.response(for: request)
            } throws: { error in
                (error as? HTTPError) == .invalidRequest
            }
        }
        let seen = try await client.decode(
            [[String]].self, from: HTTPRequest(url: url, headers: ["X-Test": "a"], bearerToken: "t0k"))
        #expect(seen.contains(["X-Test", "a"]))
        #expect(!seen.contains { $0.first?.lowercased() == "injected" })
    }

    @Test func theBearerTokenDoesNotFollowARedirectToAnotherPort() async throws {
        let first = try await PythonPeer.start("http_peer.py")
        defer { first.stop() }
        let second = try await PythonPeer.start("http_peer.py")
        defer { second.stop() }
        let client = HTTPClient()
        let seen = try await client.decode(
            [String: String?].self,
            from: HTTPRequest(
                url: URL(string: "http://127.0.0.1:\(first.port)/redirect-to-port?port=\(second.port)")!,
                bearerToken: "t0k"))
        #expect(seen["authorization"] == .some(nil))
    }

    @Test func aCookieForAPublicSuffixDomainStaysWithItsHost() async throws {
        let peer = try await PythonPeer.start("http_peer.py")
        defer { peer.stop() }
        let client = HTTPClient()
        // `localhost` is a public suffix (no rule lists it, so the default rule "*" applies): a
        // `Domain=localhost` cookie from localhost itself may only be host-only.
        _ = try await client.send(
            HTTPRequest(url: URL(string: "http://localhost:\(peer.port)/cookies/set-domain?name=a&domain=localhost")!))
        #expect(client.cookies.all.map(\.hostOnly) == [true])
        let seen = try await client.decode(
            [String: String].self, from: HTTPRequest(url: URL(string: "http://localhost:\(peer.port)/cookies")!))
        #expect(seen == ["a": "1"])
    }
}
