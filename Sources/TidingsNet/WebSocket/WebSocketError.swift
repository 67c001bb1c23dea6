import TidingsCore

/// A `WebSocketError` describes why a WebSocket connection failed or a frame was refused, with the
/// close code the endpoint sends (or reports) because of it.
///
/// It is a `TidingsError` (TidingsCore): catch by kind (`catch WebSocketError.pongTimeout`) or compare
/// (`error == .handshakeFailed`). `description` never contains payload bytes or header values (which may
/// hold tokens).
public struct WebSocketError: TidingsError {
    /// The kinds of failure; not public, so a new kind breaks no caller's `switch`.
    package enum Code: String, Sendable {
        case invalidURL, handshakeFailed, protocolViolation, invalidUTF8, messageTooBig
        case connectionLost, pongTimeout, timedOut, closed
    }

    /// What went wrong (inside the package; callers compare with the static members).
    package let code: Code
    /// The close code that goes with the failure (sent to the peer where a frame can still be sent).
    public let closeCode: WebSocketCloseCode
    /// A human-readable detail (never payload bytes or header values).
    public let detail: String
    /// The HTTP status of a failed handshake, when there was a response.
    public let httpStatus: Int?
    /// The transport error underneath, when there is one.
    public let underlying: TransportError?

    /// Creates an error with the close code RFC 6455 assigns to its kind.
    package init(_ kind: Code, detail: String, httpStatus: Int? = nil, underlying: TransportError? = nil) {
        self.code = kind
        self.detail = detail
        self.httpStatus = httpStatus
        self.underlying = underlying
        switch kind {
        case .protocolViolation, .invalidURL, .handshakeFailed: closeCode = .protocolError
        case .invalidUTF8: closeCode = .invalidPayloadData
        case .messageTooBig: closeCode = .messageTooBig
        case .connectionLost, .pongTimeout, .timedOut: closeCode = .abnormalClosure
        case .closed: closeCode = .normalClosure
        }
    }

    /// The kind of failure (compare with the static members, e.g. `error == .pongTimeout`).
    public var kind: TidingsErrorKind { TidingsErrorKind(code) }

    /// The URL is not a usable `ws://` or `wss://` URL.
    public static let invalidURL = WebSocketError(.invalidURL, detail: "")
    /// The opening handshake failed (status not 101, bad `Sec-WebSocket-Accept`, …).
    public static let handshakeFailed = WebSocketError(.handshakeFailed, detail: "")
    /// A frame broke RFC 6455: reserved bits, unknown opcode, masking, control-frame rules,
    /// bad fragmentation, a bad close frame. Close code 1002.
    public static let protocolViolation = WebSocketError(.protocolViolation, detail: "")
    /// A text message (or close reason) was not valid UTF-8. Close code 1007.
    public static let invalidUTF8 = WebSocketError(.invalidUTF8, detail: "")
    /// A frame or message exceeded the configured maximum size. Close code 1009.
    public static let messageTooBig = WebSocketError(.messageTooBig, detail: "")
    /// The connection dropped without a close handshake, or the transport failed. Code 1006.
    public static let connectionLost = WebSocketError(.connectionLost, detail: "")
    /// Our pings went unanswered for longer than the pong timeout. Code 1006.
    public static let pongTimeout = WebSocketError(.pongTimeout, detail: "")
    /// The connect (TCP, TLS and handshake) did not finish within its timeout.
    public static let timedOut = WebSocketError(.timedOut, detail: "")
    /// The connection is closing or closed; nothing more can be sent.
    public static let closed = WebSocketError(.closed, detail: "")

    /// The kind, close code, detail, HTTP status and transport error; never payloads or header values.
    public var description: String {
        var text = "\(shortDescription) (close code \(closeCode.rawValue)): \(detail)"
        if let httpStatus { text += " [HTTP \(httpStatus)]" }
        if let underlying { text += " [\(underlying)]" }
        return text
    }
}
