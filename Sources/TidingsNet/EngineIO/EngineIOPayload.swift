import Foundation
import TidingsCore

/// The body of an HTTP long-polling request or response: several Engine.IO packets in one.
///
/// Engine.IO 4 separates packets with the byte 0x1E and writes binary as `b<base64>`; Engine.IO 3
/// writes each packet as `<length>:<packet>` (length in UTF-16 code units, as JavaScript counts) and
/// binary as `b4<base64>`. Decoding never traps: malformed bodies throw ``EngineIOError``.
public enum EngineIOPayload {
    /// The most packets the reference server accepts in one polling POST.
    public static let maximumPacketsPerPost = 16

    static let separator: UInt8 = 0x1E

    /// Encodes `packets` as one polling body.
    public static func encode(_ packets: [EngineIOPacket], version: EngineIOVersion = .v4) -> [UInt8] {
        var out: [UInt8] = []
        switch version {
        case .v4:
            for (index, packet) in packets.enumerated() {
                if index > 0 { out.append(separator) }
                switch packet.body {
                case .text(let text):
                    out.append(UInt8(ascii: "0") + packet.kind.rawValue)
                    out.append(contentsOf: text.utf8)
                case .binary(let bytes):
                    out.append(UInt8(ascii: "b"))
                    out.append(contentsOf: Data(bytes).base64EncodedString().utf8)
                }
            }
        case .v3:
            for packet in packets {
                let encoded: String
                switch packet.body {
                case .text(let text): encoded = String(packet.kind.rawValue) + text
                case .binary(let bytes):
                    encoded = "b" + String(packet.kind.rawValue) + Data(bytes).base64EncodedString()
                }
                out.append(contentsOf: String(encoded.utf16.count).utf8)
                out.append(UInt8(ascii: ":"))
                out.append(contentsOf: encoded.utf8)
            }
        }
        return out
    }

    /// Decodes a polling body into its packets, in order.
    ///
    /// - Parameters:
    ///   - body: the HTTP body bytes.
    ///   - version: the protocol revision.
    ///   - maximumPackets: refuse bodies with more packets than this.
    /// - Throws: ``EngineIOError/malformedPayload`` for broken framing or base64,
    ///   ``EngineIOError/malformedPacket`` for a bad packet, ``EngineIOError/tooManyPackets``.
    public static func decode(
        _ body: some Collection<UInt8>,
        version: EngineIOVersion = .v4,
        maximumPackets: Int = .max
    ) throws -> [EngineIOPacket] {
        switch version {
        case .v4: return try decodeV4(Array(body), maximumPackets: maximumPackets)
        case .v3: return try decodeV3(String(decoding: Array(body), as: UTF8.self), maximumPackets: maximumPackets)
        }
    }

    private static func decodeV4(_ body: [UInt8], maximumPackets: Int) throws -> [EngineIOPacket] {
        guard !body.isEmpty else { throw EngineIOError(.malformedPayload, "empty body") }
        var packets: [EngineIOPacket] = []
        var segmentStart = 0
        // Segments are found one at a time (not split up front), so the packet limit also bounds
        // the work and memory spent on a body of a million separators.
        while segmentStart <= body.count {
            guard packets.count < maximumPackets else {
                throw EngineIOError(.tooManyPackets, "more than \(maximumPackets) packets")
            }
            let segmentEnd = body[segmentStart...].firstIndex(of: separator) ?? body.count
            let segment = body[segmentStart..<segmentEnd]
            segmentStart = segmentEnd + 1
            guard let first = segment.first else { throw EngineIOError(.malformedPayload, "empty packet") }
            if first == UInt8(ascii: "b") {
                guard let data = Data(base64Encoded: Data(segment.dropFirst())) else {
                    throw EngineIOError(.malformedPayload, "invalid base64 in binary packet")
                }
                packets.append(.message([UInt8](data)))
            } else {
                packets.append(try EngineIOPacket.decode(text: String(decoding: segment, as: UTF8.self)))
            }
        }
        return packets
    }

    private static func decodeV3(_ body: String, maximumPackets: Int) throws -> [EngineIOPacket] {
        let units = Array(body.utf16)
        guard !units.isEmpty else { throw EngineIOError(.malformedPayload, "empty body") }
        var packets: [EngineIOPacket] = []
        var index = 0
        while index < units.count {
            guard packets.count < maximumPackets else {
                throw EngineIOError(.tooManyPackets, "more than \(maximumPackets) packets")
            }
            var length = 0
            var digits = 0
            while index < units.count, units[index] != 0x3A {
                let unit = units[index]
                guard unit >= 0x30, unit <= 0x39, digits < 10 else {
                    throw EngineIOError(.malformedPayload, "invalid packet length")
                }
                length = length * 10 + Int(unit - 0x30)
                digits += 1
                index += 1
            }
            guard index < units.count, digits > 0 else { throw EngineIOError(.malformedPayload, "missing length") }
            index += 1
            guard length > 0, units.count - index >= length else {
                throw EngineIOError(.malformedPayload, "length \(length) past the end of the body")
            }
            let text = String(decoding: units[index..<index + length], as: UTF16.self)
            index += length
            if text.utf8.first == UInt8(ascii: "b") {
                let rest = text.utf8.dropFirst()
                guard let typeByte = rest.first, typeByte >= UInt8(ascii: "0"),
                    let kind = EngineIOPacket.Kind(rawValue: typeByte &- UInt8(ascii: "0"))
                else { throw EngineIOError(.malformedPacket, "invalid binary packet type") }
                guard let data = Data(base64Encoded: Data(rest.dropFirst())) else {
                    throw EngineIOError(.malformedPayload, "invalid base64 in binary packet")
                }
                packets.append(EngineIOPacket(kind, .binary([UInt8](data))))
            } else {
                packets.append(try EngineIOPacket.decode(text: text))
            }
        }
        return packets
    }
}

/// The session parameters of an Engine.IO `open` packet.
public struct EngineIOHandshake: Sendable, Hashable {
    /// The session id, sent back on every polling request and on the upgrade.
    public var sid: String
    /// Transports the server lets this session upgrade to (`websocket`).
    public var upgrades: [String]
    /// How often the server (v4) or the client (v3) pings.
    public var pingInterval: Duration
    /// How long a ping may go unanswered.
    public var pingTimeout: Duration
    /// The largest polling body the server accepts, in bytes, when it says.
    public var maxPayload: Int?

    /// A handshake with the given parameters.
    public init(sid: String, upgrades: [String], pingInterval: Duration, pingTimeout: Duration, maxPayload: Int?) {
        self.sid = sid
        self.upgrades = upgrades
        self.pingInterval = pingInterval
        self.pingTimeout = pingTimeout
        self.maxPayload = maxPayload
    }

    /// Parses the JSON body of an `open` packet.
    ///
    /// - Throws: ``EngineIOError/malformedHandshake`` when the JSON is invalid or lacks `sid`,
    ///   `pingInterval` or `pingTimeout`, or they are out of range.
    public init(json: String) throws {
        guard let value = try? JSONValue(parsing: json), let object = value.objectValue else {
            throw EngineIOError(.malformedHandshake, "the open packet is not a JSON object")
        }
        guard let sid = object["sid"]?.stringValue, !sid.isEmpty else {
            throw EngineIOError(.malformedHandshake, "no sid")
        }
        guard let interval = object["pingInterval"]?.intValue, (0...86_400_000).contains(interval),
            let timeout = object["pingTimeout"]?.intValue, (0...86_400_000).contains(timeout)
        else { throw EngineIOError(.malformedHandshake, "no valid pingInterval/pingTimeout") }
        self.sid = sid
        self.upgrades = object["upgrades"]?.arrayValue?.compactMap(\.stringValue) ?? []
        self.pingInterval = .milliseconds(interval)
        self.pingTimeout = .milliseconds(timeout)
        self.maxPayload = object["maxPayload"]?.intValue.flatMap { $0 > 0 ? $0 : nil }
    }
}
