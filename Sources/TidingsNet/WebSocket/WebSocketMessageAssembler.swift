/// Reassembles data frames (text, binary, continuation) into messages (RFC 6455 §5.4).
///
/// It refuses a continuation without a started message, a new message before the previous one
/// finished, messages above ``maximumMessageSize``, and text that is not UTF-8 — checked fragment by
/// fragment, so a bad byte fails at once and a character may span fragments. Control frames are not
/// its business: handle them before calling ``push(_:)`` (they may arrive between fragments).
public struct WebSocketMessageAssembler: Sendable {
    /// The largest message, in bytes, after reassembly.
    public let maximumMessageSize: Int
    private var opcode: WebSocketOpcode?
    private var bytes: [UInt8] = []
    private var validator = UTF8Validator()

    /// Creates an assembler refusing messages above `maximumMessageSize` bytes.
    public init(maximumMessageSize: Int = 16 * 1024 * 1024) {
        self.maximumMessageSize = maximumMessageSize
    }

    /// Whether a fragmented message is in progress.
    public var isAssembling: Bool { opcode != nil }

    /// Adds a data frame; returns the message it completes, if any.
    ///
    /// - Throws: ``WebSocketError`` (`protocolViolation`, `invalidUTF8`, `messageTooBig`).
    public mutating func push(_ frame: WebSocketFrame) throws(WebSocketError) -> WebSocketMessage? {
        switch frame.opcode {
        case .text, .binary:
            guard opcode == nil else {
                throw WebSocketError(.protocolViolation, detail: "new \(frame.opcode) message inside a fragmented one")
            }
            opcode = frame.opcode
            validator = UTF8Validator()
            bytes.removeAll(keepingCapacity: true)
        case .continuation:
            guard opcode != nil else {
                throw WebSocketError(.protocolViolation, detail: "continuation frame without a message to continue")
            }
        case .close, .ping, .pong:
            throw WebSocketError(.protocolViolation, detail: "control frame passed to the message assembler")
        }
        guard bytes.count + frame.payload.count <= maximumMessageSize else {
            throw WebSocketError(
                .messageTooBig, detail: "message exceeds the limit of \(maximumMessageSize) bytes")
        }
        if opcode == .text, !validator.consume(frame.payload) {
            throw WebSocketError(.invalidUTF8, detail: "text message is not valid UTF-8")
        }
        if bytes.isEmpty && frame.fin {
            // Unfragmented: skip the copy into the reassembly buffer.
            return try finish(frame.payload)
        }
        bytes += frame.payload
        guard frame.fin else { return nil }
        let message = bytes
        bytes = []
        return try finish(message)
    }

    private mutating func finish(_ payload: [UInt8]) throws(WebSocketError) -> WebSocketMessage {
        let kind = opcode
        opcode = nil
        if kind == .text {
            guard validator.isComplete else {
                throw WebSocketError(.invalidUTF8, detail: "text message ends inside a character")
            }
            return .text(String(decoding: payload, as: UTF8.self))
        }
        return .binary(payload)
    }
}
