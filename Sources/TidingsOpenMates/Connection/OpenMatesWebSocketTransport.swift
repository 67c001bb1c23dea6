import Foundation
import TidingsCore
import TidingsNet

/// Connects to an OpenMates server's WebSocket, `<origin>/v1/ws?sessionId=<uuid>[&token=<ws token>]`.
///
/// The credential is what the server reads: the session's cookie in the `Cookie` header, or a short-lived
/// WebSocket token in the `token` query parameter — the protocol's one exception to "tokens in headers, never in
/// URLs" (the server reads no header for it). The token is kept out of everything that can be shown: ``url``,
/// ``description`` and TidingsNet's logs and errors (which name host and port only) never carry it; only the
/// upgrade request's target does. WebSocket pings go out every 25 s by default.
public struct OpenMatesWebSocketTransport: OpenMatesTransport, CustomStringConvertible, CustomReflectable {
    /// How the client proves its session.
    public enum Credential: Sendable {
        /// The session's cookie header value (`auth_refresh_token=…`), sent as `Cookie`.
        case cookie(String)
        /// A short-lived WebSocket token, sent as the `token` query parameter of the upgrade (never shown).
        case token(String)
    }

    /// The endpoint as it may be logged or shown: the session ID in its query, never the token.
    public let url: URL
    /// ``url`` with the token, the target of the upgrade request: never logged, printed or put in an error.
    let requestURL: URL
    private let credential: Credential?
    /// The WebSocket settings connections use; `WebSocket.Configuration.pingInterval` is 25 s by default.
    public let configuration: WebSocket.Configuration

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
        var request = components
        if case .token(let token)? = credential {
            request?.queryItems?.append(URLQueryItem(name: "token", value: token))
            // `+` would read as a space on the server; the token's bytes must arrive as they are.
            let query = request?.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
            request?.percentEncodedQuery = query
        }
        guard let requestURL = request?.url else {
            throw OpenMatesError.malformedPayload("transport", "the token does not fit in a URL")
        }
        self.url = url
        self.requestURL = requestURL
        self.credential = credential
        self.configuration = configuration
    }

    /// The headers the upgrade request carries for the credential (the cookie; a token travels in the query).
    public var credentialHeaders: [(name: String, value: String)] {
        switch credential {
        case .cookie(let cookie)?: [(name: "Cookie", value: cookie)]
        case .token?, nil: []
        }
    }

    /// The endpoint without the token, and which kind of credential is used (never its value).
    public var description: String {
        let kind: String
        switch credential {
        case .cookie?: kind = "cookie"
        case .token?: kind = "token"
        case nil: kind = "none"
        }
        return "OpenMatesWebSocketTransport(\(url.absoluteString), credential: \(kind))"
    }

    /// What `dump` and debuggers show: ``url`` only, so the token stays out of them too.
    public var customMirror: Mirror { Mirror(self, children: ["url": url]) }

    /// Opens a WebSocket and adapts it to an ``OpenMatesChannel``.
    ///
    /// - Throws: `WebSocketError` when the server cannot be reached or refuses the upgrade (a refused
    ///   login is an HTTP 403 at the handshake); it names host and port, never the token.
    public func connect() async throws -> OpenMatesChannel {
        var configuration = configuration
        configuration.headers += credentialHeaders
        let socket = try await WebSocket.connect(to: requestURL, configuration: configuration)
        return OpenMatesChannel.overWebSocket(
            messages: socket.messages, sendText: { text in try await socket.send(text: text) },
            close: { await socket.close() })
    }
}
