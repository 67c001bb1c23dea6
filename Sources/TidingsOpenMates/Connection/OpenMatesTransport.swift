import Foundation
import TidingsNet

/// Opens connections to an OpenMates server; the client calls it again to reconnect.
///
/// The shipped transports are ``OpenMatesWebSocketTransport`` and the sandbox's in-process one; tests may
/// supply their own.
public protocol OpenMatesTransport: Sendable {
    /// Opens a fresh connection.
    ///
    /// - Throws: whatever the underlying connection throws when the server cannot be reached or refuses.
    func connect() async throws -> OpenMatesChannel
}

/// One open connection: text frames both ways.
///
/// `inbound` finishes (normally or by throwing) when the connection is gone; after that `send` throws.
/// `close` is idempotent.
public struct OpenMatesChannel: Sendable {
    /// Frames from the server, in order.
    public let inbound: AsyncThrowingStream<String, any Error>
    /// Sends one frame; throws once the connection is gone.
    public let send: @Sendable (String) async throws -> Void
    /// Closes the connection; `inbound` then finishes.
    public let close: @Sendable () async -> Void

    /// Creates a channel from its three parts.
    public init(
        inbound: AsyncThrowingStream<String, any Error>, send: @escaping @Sendable (String) async throws -> Void,
        close: @escaping @Sendable () async -> Void
    ) {
        self.inbound = inbound
        self.send = send
        self.close = close
    }

    /// A channel over a WebSocket's messages: each text (or UTF-8 binary) message is one frame.
    ///
    /// The messages are read by a task of the channel's own, ended by `close` or when `inbound` is dropped.
    public static func overWebSocket(
        messages: AsyncThrowingStream<WebSocketMessage, any Error>,
        sendText: @escaping @Sendable (String) async throws -> Void, close: @escaping @Sendable () async -> Void
    ) -> OpenMatesChannel {
        let (inbound, continuation) = AsyncThrowingStream<String, any Error>.makeStream()
        let pump = Task {
            do {
                for try await message in messages {
                    switch message {
                    case .text(let text): continuation.yield(text)
                    case .binary(let bytes): continuation.yield(String(decoding: bytes, as: UTF8.self))
                    }
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in pump.cancel() }
        return OpenMatesChannel(
            inbound: inbound, send: sendText,
            close: {
                await close()
                pump.cancel()
            })
    }
}
