import Foundation
import TidingsCore
import TidingsNet

/// Connects to a Kecalek server over WebSocket (`ws://` or `wss://`), one JSON text message per frame.
///
/// The token, when given, travels in the `Authorization: Bearer` header of the upgrade request, never
/// in the URL.
public struct KecalekWebSocketTransport: KecalekTransport {
    /// The server's WebSocket endpoint.
    public let url: URL
    private let token: String?
    private let configuration: WebSocket.Configuration

    /// Creates a transport.
    ///
    /// - Parameters:
    ///   - url: The endpoint.
    ///   - token: A bearer token, or nil.
    ///   - configuration: Timeouts, pings, TLS trust and clock of the WebSocket.
    public init(url: URL, token: String?, configuration: WebSocket.Configuration = WebSocket.Configuration()) {
        self.url = url
        self.token = token
        self.configuration = configuration
    }

    /// Opens a WebSocket and adapts it to a ``KecalekChannel``.
    ///
    /// - Throws: `WebSocketError` when the server cannot be reached or refuses the upgrade.
    public func connect() async throws -> KecalekChannel {
        var configuration = configuration
        if let token { configuration.headers.append((name: "Authorization", value: "Bearer \(token)")) }
        let socket = try await WebSocket.connect(to: url, configuration: configuration)
        return KecalekChannel.overWebSocket(
            messages: socket.messages, sendText: { text in try await socket.send(text: text) },
            close: { await socket.close() })
    }
}
