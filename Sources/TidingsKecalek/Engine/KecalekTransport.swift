import Foundation
import TidingsNet

/// Opens connections to a Kecalek server; the client calls it again to reconnect.
///
/// The shipped transports are the WebSocket one (``KecalekWebSocketTransport``) and the sandbox's
/// in-process one; tests may supply their own.
public protocol KecalekTransport: Sendable {
    /// Opens a fresh connection.
    ///
    /// - Throws: whatever the underlying connection throws when the server cannot be reached.
    func connect() async throws -> KecalekChannel
}

/// One open connection: text frames out, text frames in.
///
/// `inbound` finishes (normally or by throwing) when the connection is gone; after that `send`
/// throws. `close` is idempotent.
public struct KecalekChannel: Sendable {
    /// Frames from the server, in order.
    public let inbound: AsyncThrowingStream<Data, any Error>
    /// Sends one frame; throws once the connection is gone.
    public let send: @Sendable (Data) async throws -> Void
    /// Closes the connection; `inbound` then finishes.
    public let close: @Sendable () async -> Void

    /// Creates a channel from its three parts.
    public init(
        inbound: AsyncThrowingStream<Data, any Error>, send: @escaping @Sendable (Data) async throws -> Void,
        close: @escaping @Sendable () async -> Void
    ) {
        self.inbound = inbound
        self.send = send
        self.close = close
    }

    /// A channel over a WebSocket's message stream: every text or binary message is one inbound frame, and
    /// `sendText` sends each frame as one text message.
    ///
    /// The messages are read by a task of the channel's own, ended by `close` or when `inbound` is dropped.
    public static func overWebSocket(
        messages: AsyncThrowingStream<WebSocketMessage, any Error>,
        sendText: @escaping @Sendable (String) async throws -> Void, close: @escaping @Sendable () async -> Void
    ) -> KecalekChannel {
        let (inbound, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        let pump = Task {
            do {
                for try await message in messages {
                    switch message {
                    case .text(let text): continuation.yield(Data(text.utf8))
                    case .binary(let bytes): continuation.yield(Data(bytes))
                    }
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in pump.cancel() }
        return KecalekChannel(
            inbound: inbound,
            send: { frame in try await sendText(String(decoding: frame, as: UTF8.self)) },
            close: {
                await close()
                pump.cancel()
            })
    }
}
