/// The opcode of a WebSocket frame (RFC 6455 §5.2).
public enum WebSocketOpcode: UInt8, Sendable, Equatable, CaseIterable {
    /// A further fragment of the message in progress.
    case continuation = 0x0
    /// The first fragment of a UTF-8 text message.
    case text = 0x1
    /// The first fragment of a binary message.
    case binary = 0x2
    /// A close frame: optional 2-byte code plus UTF-8 reason.
    case close = 0x8
    /// A ping; the other side answers with a pong carrying the same payload.
    case ping = 0x9
    /// A pong, solicited or not.
    case pong = 0xA

    /// Whether this is a control frame (close, ping, pong): at most 125 bytes and never fragmented.
    public var isControl: Bool { rawValue & 0x8 != 0 }
}

/// Which side of a WebSocket connection a codec works for; it decides the masking rules.
public enum WebSocketRole: Sendable, Equatable {
    /// The client masks every frame it sends and expects unmasked frames.
    case client
    /// The server sends unmasked frames and expects masked ones.
    case server
}

/// A WebSocket close status code (RFC 6455 §7.4).
public struct WebSocketCloseCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The numeric code.
    public let rawValue: UInt16

    /// Creates a code from its number.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// 1000: the purpose of the connection was fulfilled.
    public static let normalClosure = WebSocketCloseCode(rawValue: 1000)
    /// 1001: the endpoint is going away (server shutdown, page navigation).
    public static let goingAway = WebSocketCloseCode(rawValue: 1001)
    /// 1002: the peer broke the protocol.
    public static let protocolError = WebSocketCloseCode(rawValue: 1002)
    /// 1003: a data type the endpoint cannot accept.
    public static let unsupportedData = WebSocketCloseCode(rawValue: 1003)
    /// 1005: (never sent) the close frame carried no code.
    public static let noStatusReceived = WebSocketCloseCode(rawValue: 1005)
    /// 1006: (never sent) the connection dropped without a close frame.
    public static let abnormalClosure = WebSocketCloseCode(rawValue: 1006)
    /// 1007: a text message was not valid UTF-8.
    public static let invalidPayloadData = WebSocketCloseCode(rawValue: 1007)
    /// 1008: the message violates the endpoint's policy.
    public static let policyViolation = WebSocketCloseCode(rawValue: 1008)
    /// 1009: a message was too big to process.
    public static let messageTooBig = WebSocketCloseCode(rawValue: 1009)
    /// 1010: the client expected an extension the server did not negotiate.
    public static let mandatoryExtension = WebSocketCloseCode(rawValue: 1010)
    /// 1011: the server hit an unexpected condition.
    public static let internalError = WebSocketCloseCode(rawValue: 1011)
    /// 1012: the service is restarting (IANA registry).
    public static let serviceRestart = WebSocketCloseCode(rawValue: 1012)
    /// 1013: try again later, the server is overloaded (IANA registry).
    public static let tryAgainLater = WebSocketCloseCode(rawValue: 1013)
    /// 1014: a gateway got a bad response from the upstream server (IANA registry).
    public static let badGateway = WebSocketCloseCode(rawValue: 1014)

    /// Whether the code may appear in a close frame on the wire: 1000–1003, 1007–1014 (RFC 6455 plus
    /// the IANA-registered 1012–1014, which Node's `ws` and Python's `websockets` send too) and
    /// 3000–4999.
    public var isValidOnWire: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }

    public var description: String { String(rawValue) }
}

/// One WebSocket frame with its payload already unmasked.
public struct WebSocketFrame: Sendable, Equatable {
    /// Whether this is the final fragment of a message (always true for control frames).
    public var fin: Bool
    /// The three reserved bits (RSV1–RSV3) as a number 0…7; non-zero only with extensions.
    public var reserved: UInt8
    /// What the frame carries.
    public var opcode: WebSocketOpcode
    /// The application data, unmasked.
    public var payload: [UInt8]

    /// Creates a frame.
    public init(fin: Bool = true, reserved: UInt8 = 0, opcode: WebSocketOpcode, payload: [UInt8] = []) {
        self.fin = fin
        self.reserved = reserved
        self.opcode = opcode
        self.payload = payload
    }

    /// A close frame carrying `code` and a UTF-8 `reason` (truncated to fit the 125-byte limit).
    public static func close(code: WebSocketCloseCode, reason: String = "") -> WebSocketFrame {
        var payload = [UInt8(code.rawValue >> 8), UInt8(code.rawValue & 0xFF)]
        // Whole scalars only: a cut character would make the peer reject the reason as invalid UTF-8.
        var reasonBytes: [UInt8] = []
        for scalar in reason.unicodeScalars {
            let encoded = Array(String(scalar).utf8)
            guard reasonBytes.count + encoded.count <= 123 else { break }
            reasonBytes += encoded
        }
        payload += reasonBytes
        return WebSocketFrame(opcode: .close, payload: payload)
    }

    /// Reads the code and reason of a close frame.
    ///
    /// - Returns: `(.noStatusReceived, "")` for an empty payload.
    /// - Throws: ``WebSocketError`` `protocolViolation` for a 1-byte payload or a code not allowed on
    ///   the wire, `invalidUTF8` when the reason is not UTF-8.
    public func closeStatus() throws(WebSocketError) -> (code: WebSocketCloseCode, reason: String) {
        if payload.isEmpty { return (.noStatusReceived, "") }
        guard payload.count >= 2 else {
            throw WebSocketError(.protocolViolation, detail: "close frame with a 1-byte payload")
        }
        let code = WebSocketCloseCode(rawValue: UInt16(payload[0]) << 8 | UInt16(payload[1]))
        guard code.isValidOnWire else {
            throw WebSocketError(.protocolViolation, detail: "close code \(code.rawValue) is not allowed on the wire")
        }
        var validator = UTF8Validator()
        let reasonBytes = payload[2...]
        guard validator.consume(reasonBytes), validator.isComplete else {
            throw WebSocketError(.invalidUTF8, detail: "close reason is not valid UTF-8")
        }
        return (code, String(decoding: reasonBytes, as: UTF8.self))
    }
}

/// A complete WebSocket message, reassembled from its fragments.
public enum WebSocketMessage: Sendable, Equatable {
    /// A text message (valid UTF-8 guaranteed).
    case text(String)
    /// A binary message.
    case binary([UInt8])
}
