import Foundation
import TidingsCore
import TidingsNet

/// One open user-stream connection: its messages, and a way to close it.
public protocol MastodonStreamConnection: Sendable {
    /// The server's messages in order; finishes when the server closes, throws when the connection dies.
    var messages: AsyncThrowingStream<WebSocketMessage, any Error> { get }
    /// Closes the connection at once.
    func close() async
}

/// Opens a user-stream connection to `url` with `headers` (the `Authorization` header among them), or throws.
public typealias MastodonStreamConnector =
    @Sendable (_ url: URL, _ headers: [(name: String, value: String)]) async throws -> any MastodonStreamConnection

/// TidingsNet's `WebSocket` as a stream connection.
struct MastodonWebSocketConnection: MastodonStreamConnection {
    let socket: WebSocket
    var messages: AsyncThrowingStream<WebSocketMessage, any Error> { socket.messages }
    func close() async { await socket.close() }
}

extension MastodonUserStream {
    /// Connects with TidingsNet's WebSocket client: a ping every 30 s (a peer that stops answering them is
    /// dead), no read timeout (a quiet stream is a healthy one), the connect deadline of `connectTimeout`, all
    /// on `clock`.
    public static func webSocketConnector(
        clock: any Clock<Duration> = ContinuousClock(), connectTimeout: Duration = .seconds(30),
        tls: TLSConfiguration = TLSConfiguration()
    ) -> MastodonStreamConnector {
        { url, headers in
            let configuration = webSocketConfiguration(
                headers: headers, connectTimeout: connectTimeout, tls: tls, clock: clock)
            return MastodonWebSocketConnection(
                socket: try await WebSocket.connect(to: url, configuration: configuration))
        }
    }

    /// The interval at which the user stream pings the server (seed 002: every 30 s).
    static let pingInterval: Duration = .seconds(30)

    /// The WebSocket configuration of a user-stream connection: the ping is the only liveness check (TidingsNet's
    /// WebSocket has no read timeout, and none is wanted: a user stream may be silent for hours).
    static func webSocketConfiguration(
        headers: [(name: String, value: String)], connectTimeout: Duration, tls: TLSConfiguration,
        clock: any Clock<Duration>
    ) -> WebSocket.Configuration {
        WebSocket.Configuration(
            headers: headers, connectTimeout: connectTimeout, pingInterval: pingInterval, tls: tls, clock: clock)
    }
}
