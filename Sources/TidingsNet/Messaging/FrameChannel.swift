import Foundation

/// One open message-based connection: frames both ways, the shape every backend's transport hands its client
/// (Kecalek's `Data` frames, OpenMates' `String` frames).
///
/// `inbound` finishes (normally or by throwing) when the connection is gone; after that `send` throws.
/// `close` is idempotent.
public struct FrameChannel<Frame: Sendable>: Sendable {
    /// Frames from the server, in order.
    public let inbound: AsyncThrowingStream<Frame, any Error>
    /// Sends one frame; throws once the connection is gone.
    public let send: @Sendable (Frame) async throws -> Void
    /// Closes the connection; `inbound` then finishes.
    public let close: @Sendable () async -> Void

    /// Creates a channel from its three parts.
    public init(
        inbound: AsyncThrowingStream<Frame, any Error>, send: @escaping @Sendable (Frame) async throws -> Void,
        close: @escaping @Sendable () async -> Void
    ) {
        self.inbound = inbound
        self.send = send
        self.close = close
    }

    /// A channel over a WebSocket's message stream: every text or binary message becomes one inbound frame
    /// through `frame`, and each outbound frame is sent as one text message through `text`.
    ///
    /// The messages are read by a task of the channel's own, ended by `close` or when `inbound` is dropped.
    static func overWebSocket(
        messages: AsyncThrowingStream<WebSocketMessage, any Error>,
        sendText: @escaping @Sendable (String) async throws -> Void, close: @escaping @Sendable () async -> Void,
        frame: @escaping @Sendable (WebSocketMessage) -> Frame, text: @escaping @Sendable (Frame) -> String
    ) -> FrameChannel {
        let (inbound, continuation) = AsyncThrowingStream<Frame, any Error>.makeStream()
        let pump = Task {
            do {
                for try await message in messages { continuation.yield(frame(message)) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in pump.cancel() }
        return FrameChannel(
            inbound: inbound, send: { outbound in try await sendText(text(outbound)) },
            close: {
                await close()
                pump.cancel()
            })
    }
}

extension FrameChannel where Frame == String {
    /// A channel over a WebSocket's messages: each text (or UTF-8 binary) message is one frame, and each frame
    /// is sent as one text message.
    ///
    /// The messages are read by a task of the channel's own, ended by `close` or when `inbound` is dropped.
    public static func overWebSocket(
        messages: AsyncThrowingStream<WebSocketMessage, any Error>,
        sendText: @escaping @Sendable (String) async throws -> Void, close: @escaping @Sendable () async -> Void
    ) -> FrameChannel {
        overWebSocket(
            messages: messages, sendText: sendText, close: close,
            frame: { message in
                switch message {
                case .text(let text): text
                case .binary(let bytes): String(decoding: bytes, as: UTF8.self)
                }
            }, text: { $0 })
    }
}

extension FrameChannel where Frame == Data {
    /// A channel over a WebSocket's message stream: every text or binary message is one inbound frame, and
    /// each frame is sent as one text message.
    ///
    /// The messages are read by a task of the channel's own, ended by `close` or when `inbound` is dropped.
    public static func overWebSocket(
        messages: AsyncThrowingStream<WebSocketMessage, any Error>,
        sendText: @escaping @Sendable (String) async throws -> Void, close: @escaping @Sendable () async -> Void
    ) -> FrameChannel {
        overWebSocket(
            messages: messages, sendText: sendText, close: close,
            frame: { message in
                switch message {
                case .text(let text): Data(text.utf8)
                case .binary(let bytes): Data(bytes)
                }
            }, text: { String(decoding: $0, as: UTF8.self) })
    }
}
