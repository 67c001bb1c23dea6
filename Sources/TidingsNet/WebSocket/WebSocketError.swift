/// A `WebSocketError` describes why a WebSocket connection failed or a frame was refused, with the
/// close code the endpoint sends (or reports) because of it.
///
/// `description` never contains payload bytes or header values (which may hold tokens).
public struct WebSocketError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure, stable for `switch` and metrics.
    public enum Kind: String, Sendable, Equatable {
        /// The URL is not a usable `ws://` or `wss://` URL.
        case invalidURL
        /// The opening handshake failed (status not 101, bad `Sec-WebSocket-Accept`, …).
        case handshakeFailed
        /// A frame broke RFC 6455: reserved bits, unknown opcode, masking, control-frame rules,
        /// bad fragmentation, a bad close frame. Close code 1002.
        case protocolViolation
        /// A text message (or close reason) was not valid UTF-8. Close code 1007.
        case invalidUTF8
        /// A frame or message exceeded the configured maximum size. Close code 1009.
        case messageTooBig
        /// The connection dropped without a close handshake, or the transport failed. Code 1006.
        case connectionLost
        /// Our pings went unanswered for longer than the pong timeout. Code 1006.
        case pongTimeout
        /// The connect (TCP, TLS and handshake) did not finish within its timeout.
        case timedOut
        /// The connection is closing or closed; nothing more can be sent.
        case closed
    }

    /// What went wrong.
    public let kind: Kind
    /// The close code that goes with the failure (sent to the peer where a frame can still be sent).
    public let closeCode: WebSocketCloseCode
    /// A human-readable detail (never payload bytes or header values).
    public let detail: String
    /// The HTTP status of a failed handshake, when there was a response.
    public let httpStatus: Int?
    /// The transport error underneath, when there is one.
    public let underlying: TransportError?

    /// Creates an error with the close code RFC 6455 assigns to its kind.
    public init(_ kind: Kind, detail: String, httpStatus: Int? = nil, underlying: TransportError? = nil) {
        self.kind = kind
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

    public var description: String {
        var text = "WebSocketError.\(kind.rawValue) (close code \(closeCode.rawValue)): \(detail)"
        if let httpStatus { text += " [HTTP \(httpStatus)]" }
        if let underlying { text += " [\(underlying)]" }
        return text
    }

    /// Matches an error of the given kind, for `catch` patterns and `switch`.
    public static func ~= (pattern: Kind, error: WebSocketError) -> Bool { error.kind == pattern }
}
