import Foundation
import TidingsCore

/// The Engine.IO protocol revision a server speaks.
///
/// See https://github.com/socketio/engine.io-protocol for both revisions.
public enum EngineIOVersion: Int, Sendable, Hashable {
    /// Engine.IO 3 (socket.io 2.x servers): the client pings, polling payloads are `<length>:<packet>`,
    /// binary in polling is `b4<base64>`.
    case v3 = 3
    /// Engine.IO 4 (socket.io 3 and later): the server pings, polling payloads are separated by 0x1E,
    /// binary in polling is `b<base64>`.
    case v4 = 4
}

/// A WebSocket message as Engine.IO uses it: one Engine.IO packet per message.
public enum EngineIOFrame: Sendable, Hashable {
    /// A text message.
    case text(String)
    /// A binary message.
    case binary([UInt8])
}

/// Why Engine.IO input was refused.
///
/// Match by kind with `catch EngineIOError.malformedPacket` (equality compares kinds only); ``detail``
/// says what was wrong, without echoing payloads.
public struct EngineIOError: TidingsError {
    enum Code: String, Sendable, Hashable {
        case malformedPacket, malformedPayload, malformedHandshake, tooManyPackets, payloadTooLarge
        case transportFailed, handshakeFailed, upgradeFailed, heartbeatTimeout, closed, httpStatus, timedOut
    }

    let code: Code

    /// The kind of failure (compare with the static members, e.g. `error == .closed`).
    public var kind: TidingsErrorKind { TidingsErrorKind(code) }

    /// What exactly was wrong, for logs and for the person debugging.
    public let detail: String

    init(_ code: Code, _ detail: String = "") {
        self.code = code
        self.detail = detail
    }

    /// A packet that does not start with a known type, or has an invalid body.
    public static let malformedPacket = EngineIOError(.malformedPacket)
    /// A polling body whose framing (lengths, separators, base64) is broken.
    public static let malformedPayload = EngineIOError(.malformedPayload)
    /// An `open` packet whose JSON lacks `sid`, `pingInterval` or `pingTimeout`.
    public static let malformedHandshake = EngineIOError(.malformedHandshake)
    /// A polling body with more packets than the limit.
    public static let tooManyPackets = EngineIOError(.tooManyPackets)
    /// A packet larger than the server's `maxPayload`.
    public static let payloadTooLarge = EngineIOError(.payloadTooLarge)
    /// The HTTP or WebSocket connection failed; ``detail`` names the underlying error.
    public static let transportFailed = EngineIOError(.transportFailed)
    /// The server answered the handshake with something other than an `open` packet.
    public static let handshakeFailed = EngineIOError(.handshakeFailed)
    /// The upgrade from polling to WebSocket did not complete.
    public static let upgradeFailed = EngineIOError(.upgradeFailed)
    /// The server sent no ping within `pingInterval + pingTimeout`.
    public static let heartbeatTimeout = EngineIOError(.heartbeatTimeout)
    /// The connection is closed.
    public static let closed = EngineIOError(.closed)
    /// The server answered an HTTP request with an error status; ``detail`` has the status and message.
    public static let httpStatus = EngineIOError(.httpStatus)
    /// The server did not answer within the configured limit (handshake, HTTP response, connect).
    public static let timedOut = EngineIOError(.timedOut)

    /// The kind and the detail.
    public var description: String { detail.isEmpty ? "EngineIOError.\(code)" : "EngineIOError.\(code): \(detail)" }
}

/// One Engine.IO packet: a type and a text or binary body.
///
/// Decoding never traps: any malformed input throws ``EngineIOError``.
public struct EngineIOPacket: Sendable, Hashable {
    /// The packet types of both protocol revisions.
    public enum Kind: UInt8, Sendable, Hashable, CaseIterable {
        /// The handshake, carrying the session's JSON parameters.
        case open = 0
        /// The session is closing.
        case close = 1
        /// A heartbeat ping (or, with body `probe`, an upgrade probe).
        case ping = 2
        /// The answer to a ping.
        case pong = 3
        /// Application data.
        case message = 4
        /// Finishes the switch to WebSocket.
        case upgrade = 5
        /// Does nothing; used to release a pending poll.
        case noop = 6
    }

    /// A packet body.
    public enum Body: Sendable, Hashable {
        /// Text, possibly empty.
        case text(String)
        /// Bytes; only messages carry them.
        case binary([UInt8])
    }

    /// The packet type.
    public var kind: Kind
    /// The packet body.
    public var body: Body

    /// A packet of `kind` with `body`.
    public init(_ kind: Kind, _ body: Body = .text("")) {
        self.kind = kind
        self.body = body
    }

    /// A text message packet.
    public static func message(_ text: String) -> EngineIOPacket { EngineIOPacket(.message, .text(text)) }
    /// A binary message packet.
    public static func message(_ bytes: [UInt8]) -> EngineIOPacket { EngineIOPacket(.message, .binary(bytes)) }

    /// The packet's text body, or an empty string when it is binary.
    public var text: String {
        if case .text(let text) = body { return text }
        return ""
    }

    /// Decodes a packet from a WebSocket message.
    ///
    /// - Throws: ``EngineIOError/malformedPacket`` for an empty message or an unknown type.
    public static func decode(_ frame: EngineIOFrame, version: EngineIOVersion = .v4) throws -> EngineIOPacket {
        switch frame {
        case .text(let text): return try decode(text: text)
        case .binary(let bytes):
            switch version {
            case .v4: return .message(bytes)
            case .v3:
                // Engine.IO 3 prefixes binary frames with the packet type as a raw byte.
                guard let first = bytes.first else { throw EngineIOError(.malformedPacket, "empty binary frame") }
                guard let kind = Kind(rawValue: first) else {
                    throw EngineIOError(.malformedPacket, "unknown binary packet type \(first)")
                }
                return EngineIOPacket(kind, .binary(Array(bytes.dropFirst())))
            }
        }
    }

    /// Decodes a text packet: a type digit followed by the body.
    ///
    /// - Throws: ``EngineIOError/malformedPacket`` for an empty string or an unknown type.
    public static func decode(text: String) throws -> EngineIOPacket {
        guard let first = text.utf8.first else { throw EngineIOError(.malformedPacket, "empty packet") }
        guard first >= UInt8(ascii: "0"), let kind = Kind(rawValue: first &- UInt8(ascii: "0")) else {
            throw EngineIOError(.malformedPacket, "unknown packet type byte \(first)")
        }
        // The type is one ASCII scalar, so dropping one scalar never splits a character's bytes.
        let body = String(text.unicodeScalars.dropFirst())
        return EngineIOPacket(kind, .text(body))
    }

    /// Encodes the packet as one WebSocket message.
    public func frame(version: EngineIOVersion = .v4) -> EngineIOFrame {
        switch body {
        case .text(let text): return .text(String(kind.rawValue) + text)
        case .binary(let bytes):
            switch version {
            case .v4: return .binary(bytes)
            case .v3: return .binary([kind.rawValue] + bytes)
            }
        }
    }
}
