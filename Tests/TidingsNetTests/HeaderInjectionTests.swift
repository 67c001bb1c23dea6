import Foundation
import Testing

@testable import TidingsNet

/// Caller text that reaches a request line or header is checked on bytes in every client: in Swift
/// `"\r\n"` is one `Character`, equal to neither `"\r"` nor `"\n"`, so a Character check lets it pass.
@Suite(.timeLimit(.minutes(1))) struct HeaderInjectionTests {
    static let target = try! WebSocketTarget(url: URL(string: "ws://example.com/socket")!)

    @Test(arguments: ["a\r\nInjected: yes", "a\rb", "a\nb", "a\0b", "\r\n"])
    func aWebSocketHeaderValueWithALineBreakOrNULIsRefused(value: String) {
        #expect(throws: WebSocketError.self) {
            _ = try WebSocketHandshake(target: Self.target, headers: [("X-Test", value)], subprotocols: [])
        }
    }

    @Test(arguments: ["X-Test\r\nInjected", "X-Test:", "", "X Test", "X-T\u{e9}st"])
    func aWebSocketHeaderNameThatIsNotATokenIsRefused(name: String) {
        #expect(throws: WebSocketError.self) {
            _ = try WebSocketHandshake(target: Self.target, headers: [(name, "v")], subprotocols: [])
        }
    }

    @Test func aSubprotocolWithALineBreakIsRefused() {
        #expect(throws: WebSocketError.self) {
            _ = try WebSocketHandshake(
                target: Self.target, headers: [], subprotocols: ["chat\r\nInjected: yes"])
        }
    }

    @Test func ordinaryHeadersStillGoOutOnTheirOwnLines() throws {
        let handshake = try WebSocketHandshake(
            target: Self.target, headers: [("Authorization", "Bearer a.b-c~d"), ("X-Tab", "a\tb")],
            subprotocols: ["chat.v2"])
        let lines = String(decoding: handshake.request, as: UTF8.self).components(separatedBy: "\r\n")
        #expect(lines.contains("Authorization: Bearer a.b-c~d"))
        #expect(lines.contains("X-Tab: a\tb"))
        #expect(lines.contains("Sec-WebSocket-Protocol: chat.v2"))
    }

    @Test func aConnectWithAnInjectedHeaderSendsNothing() async throws {
        let listener = try TCPListener.bind(host: "127.0.0.1", port: 0)
        defer { listener.close() }
        var configuration = WebSocket.Configuration(pingInterval: nil)
        configuration.headers = [("X-Test", "a\r\nInjected: yes")]
        await #expect {
            _ = try await WebSocket.connect(
                to: URL(string: "ws://127.0.0.1:\(listener.port)/")!, configuration: configuration)
        } throws: { error in
            (error as? WebSocketError) == .handshakeFailed
        }
    }

    @Test(arguments: [["X-Test": "a\r\nInjected: yes"], ["X\r\nInjected": "1"], ["X-Test": "a\nb"]])
    func aPollingHeaderWithALineBreakIsRefused(headers: [String: String]) {
        #expect(throws: EngineIOError.self) {
            _ = try EngineIOHTTPConnectionPool.requestHead(
                "GET", url: URL(string: "http://example.com/socket.io/?EIO=4")!, host: "example.com", port: 80,
                headers: headers)
        }
    }

    @Test func anHTTPClientRequestWithALineBreakInAHeaderOrTokenIsRefusedBeforeSending() async throws {
        // Nothing listens on port 9 of this URL: the request must fail before any connection.
        let url = URL(string: "http://127.0.0.1:9/x")!
        let client = HTTPClient()
        for request in [
            HTTPRequest(url: url, headers: ["X-Test": "a\r\nInjected: yes"]),
            HTTPRequest(url: url, headers: ["X\r\nInjected": "yes"]),
            HTTPRequest(url: url, bearerToken: "t0k\r\nInjected: yes"),
        ] {
            await #expect {
                _ = try await client.response(for: request)
            } throws: { error in
                guard let error = error as? HTTPError else { return false }
                return error == .invalidRequest && !error.description.contains("t0k")
            }
        }
    }

    @Test func thePollingHostHeaderBracketsAnIPv6Literal() throws {
        let url = URL(string: "http://[::1]:8080/socket.io/?EIO=4")!
        let head = try EngineIOHTTPConnectionPool.requestHead(
            "GET", url: url, host: "::1", port: 8080, headers: [:])
        #expect(String(decoding: head, as: UTF8.self).contains("\r\nHost: [::1]:8080\r\n"))
    }

    @Test func theWebSocketHostHeaderBracketsAnIPv6Literal() throws {
        let target = try WebSocketTarget(url: URL(string: "ws://[::1]:9000/socket")!)
        #expect(target.host == "::1")
        #expect(target.hostHeader == "[::1]:9000")
    }
}
