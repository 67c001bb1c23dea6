import Foundation
import TidingsCore
import TidingsNet

/// Connects to an OpenMates server's WebSocket, `<origin>/v1/ws?sessionId=<uuid>`.
///
/// The credential travels in a header of the upgrade request — the session's cookie, or a short-lived token
/// as `Authorization: Bearer` — never in the URL, and never in a log line or error (TidingsNet treats header
/// values as secrets). WebSocket pings go out every 25 s by default.
public struct OpenMatesWebSocketTransport: OpenMatesTransport {
    /// How the client proves its session.
    public enum Credential: Sendable {
        /// The session's cookie header value (`auth_refresh_token=…`), sent as `Cookie`.
        case cookie(String)
        /// A short-lived WebSocket token, sent as `Authorization: Bearer`.
        case token(String)
    }

    /// The endpoint, with the session ID in its query.
    public let url: URL
    private let credential: Credential?
    private let configuration: WebSocket.Configuration

    /// Creates a transport.
    ///
    /// - Parameters:
    ///   - origin: The server's `ws://` or `wss://` origin (`wss://api.openmates.org`).
    ///   - sessionID: The session's UUID, sent as `sessionId`.
    ///   - credential: The cookie or token, or nil.
    ///   - configuration: Timeouts, TLS and clock; its ping interval defaults to 25 s here.
    /// - Throws: ``OpenMatesError/malformedPayload`` when `origin` and `sessionID` do not form a URL.
    public init(
        origin: URL, sessionID: String, credential: Credential?,
        configuration: WebSocket.Configuration = WebSocket.Configuration(pingInterval: .seconds(25))
    ) throws {
        var components = URLComponents(url: origin, resolvingAgainstBaseURL: false)
        components?.path = "/v1/ws"
        components?.queryItems = [URLQueryItem(name: "sessionId", value: sessionID)]
        guard let url = components?.url else {
            throw OpenMatesError.malformedPayload("transport", "origin and session ID do not form a URL")
        }
        self.url = url
        self.credential = credential
        self.configuration = configuration
    }

    /// The headers the upgrade request carries for the credential.
    public var credentialHeaders: [(name: String, value: String)] {
        switch credential {
        case .cookie(let cookie)?: [(name: "Cookie", value: cookie)]
        case .token(let token)?: [(name: "Authorization", value: "Bearer \(token)")]
        case nil: []
        }
    }

    /// Opens a WebSocket and adapts it to an ``OpenMatesChannel``.
    ///
    /// - Throws: `WebSocketError` when the server cannot be reached or refuses the upgrade (a refused
    ///   login is an HTTP 403 at the handshake).
    public func connect() async throws -> OpenMatesChannel {
        var configuration = configuration
        configuration.headers += credentialHeaders
        let socket = try await WebSocket.connect(to: url, configuration: configuration)
        return OpenMatesChannel.overWebSocket(
            messages: socket.messages, sendText: { text in try await socket.send(text: text) },
            close: { await socket.close() })
    }
}
