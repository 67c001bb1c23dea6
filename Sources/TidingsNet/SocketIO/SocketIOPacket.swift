import Foundation
import TidingsCore

/// Why a Socket.IO operation or input failed.
///
/// Match by kind with `catch SocketIOError.ackTimeout` (equality compares kinds only); ``detail`` says
/// what happened and ``data`` carries the server's payload of a refused connect.
public struct SocketIOError: TidingsError {
    enum Code: String, Sendable, Hashable {
        case malformedPacket, unexpectedAttachment, connectRefused, notConnected, sendBufferFull
        case ackTimeout, disconnected, reconnectFailed, closed, transportFailed, tooManyEarlyEvents
    }

    let code: Code

    /// The kind of failure (compare with the static members, e.g. `error == .closed`).
    public var kind: TidingsErrorKind { TidingsErrorKind(code) }

    /// What exactly happened, without payloads.
    public let detail: String
    /// The server's data of a `CONNECT_ERROR`, for ``connectRefused``.
    public let data: JSONValue?

    init(_ code: Code, _ detail: String = "", data: JSONValue? = nil) {
        self.code = code
        self.detail = detail
        self.data = data
    }

    /// A Socket.IO packet that does not follow the protocol.
    public static let malformedPacket = SocketIOError(.malformedPacket)
    /// A binary attachment arrived without a packet that announced it.
    public static let unexpectedAttachment = SocketIOError(.unexpectedAttachment)
    /// The server refused the namespace connect (a `CONNECT_ERROR`); ``data`` has its reason.
    public static let connectRefused = SocketIOError(.connectRefused)
    /// An emit was made while disconnected and the client buffers nothing.
    public static let notConnected = SocketIOError(.notConnected)
    /// An emit was made while disconnected and the send buffer is full.
    public static let sendBufferFull = SocketIOError(.sendBufferFull)
    /// The server did not acknowledge an emit in time.
    public static let ackTimeout = SocketIOError(.ackTimeout)
    /// The connection dropped before the acknowledgement arrived.
    public static let disconnected = SocketIOError(.disconnected)
    /// Reconnection gave up after the maximum number of attempts.
    public static let reconnectFailed = SocketIOError(.reconnectFailed)
    /// The client was closed by its owner.
    public static let closed = SocketIOError(.closed)
    /// The server could not be reached or the Engine.IO session failed; ``detail`` names the error.
    public static let transportFailed = SocketIOError(.transportFailed)
    /// The server sent more events before answering the namespace connect than
    /// ``SocketIOClient/Configuration/maximumBufferedEvents`` allows; the attempt was given up rather than
    /// holding an unbounded backlog.
    public static let tooManyEarlyEvents = SocketIOError(.tooManyEarlyEvents)

    /// The kind and the detail; never the payload.
    public var description: String { detail.isEmpty ? "SocketIOError.\(code)" : "SocketIOError.\(code): \(detail)" }
}

/// One Socket.IO packet (protocol 5, also read by protocol 4 servers).
///
/// The text form is `<type>[<attachments>-][<namespace>,][<ack id>][<JSON>]`; binary blobs travel as
/// separate attachments after the text, with `{"_placeholder":true,"num":n}` in their place.
/// Decoding never traps: malformed text throws ``SocketIOError/malformedPacket``.
/// See https://github.com/socketio/socket.io-protocol.
public struct SocketIOPacket: Sendable, Hashable {
    /// The packet types.
    public enum Kind: UInt8, Sendable, Hashable, CaseIterable {
        /// Connect to a namespace (client) or accept the connect (server).
        case connect = 0
        /// Leave a namespace.
        case disconnect = 1
        /// An event with arguments.
        case event = 2
        /// The acknowledgement of an event.
        case ack = 3
        /// The server refused a namespace connect.
        case connectError = 4
        /// An event with binary attachments.
        case binaryEvent = 5
        /// An acknowledgement with binary attachments.
        case binaryAck = 6
    }

    /// The most attachments one packet may announce; a bound against hostile input.
    public static let maximumAttachments = 1_000

    /// The packet type.
    public var kind: Kind
    /// The namespace, `/` by default.
    public var namespace: String
    /// The acknowledgement id, when the sender wants (or this is) an acknowledgement.
    public var id: Int?
    /// The JSON payload: the connect auth, the event name and arguments, the ack arguments.
    public var data: JSONValue?
    /// How many binary attachments follow the text (binary kinds only).
    public var attachmentCount: Int

    /// A packet with the given fields.
    public init(
        _ kind: Kind, namespace: String = "/", id: Int? = nil, data: JSONValue? = nil, attachmentCount: Int = 0
    ) {
        self.kind = kind
        self.namespace = namespace
        self.id = id
        self.data = data
        self.attachmentCount = attachmentCount
    }

    /// An event (binary when an argument holds `.binary`).
    public static func event(
        _ name: String, _ arguments: [JSONValue], namespace: String = "/", id: Int? = nil
    ) -> SocketIOPacket {
        SocketIOPacket(.event, namespace: namespace, id: id, data: .array([.string(name)] + arguments))
    }

    /// The event name, for events.
    public var eventName: String? {
        guard kind == .event || kind == .binaryEvent else { return nil }
        return data?.arrayValue?.first?.stringValue
    }

    /// The arguments: an event's arguments after its name, an ack's arguments.
    public var arguments: [JSONValue] {
        switch kind {
        case .event, .binaryEvent: return Array((data?.arrayValue ?? []).dropFirst())
        case .ack, .binaryAck: return data?.arrayValue ?? []
        default: return data.map { [$0] } ?? []
        }
    }

    /// Encodes the packet: its text and the attachments that must follow it, in order.
    ///
    /// `.binary` values inside ``data`` become placeholders and attachments; an `event` or `ack` that
    /// has any is sent as `binaryEvent` or `binaryAck`.
    public func encoded() -> (text: String, attachments: [[UInt8]]) {
        var attachments: [[UInt8]] = []
        let payload = data.map { Self.deconstruct($0, into: &attachments) }
        var kind = self.kind
        if !attachments.isEmpty {
            if kind == .event { kind = .binaryEvent }
            if kind == .ack { kind = .binaryAck }
        }
        var out: [UInt8] = [UInt8(ascii: "0") + kind.rawValue]
        if kind == .binaryEvent || kind == .binaryAck {
            out.append(contentsOf: String(attachments.count).utf8)
            out.append(UInt8(ascii: "-"))
        }
        if namespace != "/" && !namespace.isEmpty {
            out.append(contentsOf: namespace.utf8)
            out.append(UInt8(ascii: ","))
        }
        if let id { out.append(contentsOf: String(id).utf8) }
        payload?.appendJSON(to: &out)
        return (String(decoding: out, as: UTF8.self), attachments)
    }

    private static func deconstruct(_ value: JSONValue, into attachments: inout [[UInt8]]) -> JSONValue {
        switch value {
        case .binary(let bytes):
            attachments.append(bytes)
            return ["_placeholder": true, "num": .int(Int64(attachments.count - 1))]
        case .array(let elements):
            guard value.containsBinary else { return value }
            return .array(elements.map { deconstruct($0, into: &attachments) })
        case .object(let members):
            guard value.containsBinary else { return value }
            return .object(members.mapValues { deconstruct($0, into: &attachments) })
        default:
            return value
        }
    }

    /// Decodes the text of a packet. Binary kinds still hold placeholders: pass the attachments
    /// to ``reassembled(with:)`` (or use ``SocketIOPacketAssembler``).
    ///
    /// - Throws: ``SocketIOError/malformedPacket`` when the type, attachment count, namespace, id or
    ///   JSON is invalid, or the payload does not fit the type.
    public static func decode(_ text: String) throws -> SocketIOPacket {
        let bytes = Array(text.utf8)
        var index = 0
        guard let first = bytes.first, first >= UInt8(ascii: "0"),
            let kind = Kind(rawValue: first &- UInt8(ascii: "0"))
        else { throw SocketIOError(.malformedPacket, "unknown packet type") }
        index = 1
        var attachmentCount = 0
        if kind == .binaryEvent || kind == .binaryAck {
            var digits = 0
            while index < bytes.count, bytes[index] != UInt8(ascii: "-") {
                guard isDigit(bytes[index]), digits < 5 else {
                    throw SocketIOError(.malformedPacket, "invalid attachment count")
                }
                attachmentCount = attachmentCount * 10 + Int(bytes[index] - UInt8(ascii: "0"))
                digits += 1
                index += 1
            }
            guard index < bytes.count, digits > 0, attachmentCount <= maximumAttachments else {
                throw SocketIOError(.malformedPacket, "invalid attachment count")
            }
            index += 1
        }
        var namespace = "/"
        if index < bytes.count, bytes[index] == UInt8(ascii: "/") {
            let start = index
            while index < bytes.count, bytes[index] != UInt8(ascii: ",") { index += 1 }
            namespace = String(decoding: bytes[start..<index], as: UTF8.self)
            if index < bytes.count { index += 1 }
        }
        var id: Int?
        if index < bytes.count, isDigit(bytes[index]) {
            var value = 0
            var digits = 0
            while index < bytes.count, isDigit(bytes[index]) {
                guard digits < 15 else { throw SocketIOError(.malformedPacket, "ack id too long") }
                value = value * 10 + Int(bytes[index] - UInt8(ascii: "0"))
                digits += 1
                index += 1
            }
            id = value
        }
        var data: JSONValue?
        if index < bytes.count {
            do {
                data = try bytes[index...].withUnsafeBufferPointer { try JSONValue(parsingUTF8: $0) }
            } catch {
                throw SocketIOError(.malformedPacket, "invalid JSON payload: \(error)")
            }
        }
        let packet = SocketIOPacket(
            kind, namespace: namespace, id: id, data: data, attachmentCount: attachmentCount)
        guard packet.hasValidPayload else {
            throw SocketIOError(.malformedPacket, "payload does not fit packet type \(kind)")
        }
        return packet
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    /// Whether the payload has the shape the packet type requires.
    var hasValidPayload: Bool {
        switch kind {
        case .connect:
            guard let data else { return true }
            return data.objectValue != nil
        case .disconnect:
            return data == nil
        case .connectError:
            guard let data else { return true }
            return data.objectValue != nil || data.stringValue != nil
        case .event, .binaryEvent:
            guard let first = data?.arrayValue?.first else { return false }
            return first.stringValue != nil || first.intValue != nil
        case .ack, .binaryAck:
            return data?.arrayValue != nil
        }
    }

    /// The packet with its placeholders replaced by `attachments`, as an `event` or `ack`.
    ///
    /// - Throws: ``SocketIOError/malformedPacket`` when the count differs from ``attachmentCount`` or a
    ///   placeholder's `num` is out of range.
    public func reassembled(with attachments: [[UInt8]]) throws -> SocketIOPacket {
        guard attachments.count == attachmentCount else {
            throw SocketIOError(.malformedPacket, "expected \(attachmentCount) attachments, got \(attachments.count)")
        }
        var packet = self
        packet.data = try data.map { try Self.reconstruct($0, attachments) }
        packet.attachmentCount = 0
        if packet.kind == .binaryEvent { packet.kind = .event }
        if packet.kind == .binaryAck { packet.kind = .ack }
        return packet
    }

    private static func reconstruct(_ value: JSONValue, _ attachments: [[UInt8]]) throws -> JSONValue {
        switch value {
        case .array(let elements):
            return .array(try elements.map { try reconstruct($0, attachments) })
        case .object(let members):
            if members["_placeholder"] == .bool(true), let number = members["num"] {
                guard let index = number.intValue, attachments.indices.contains(index) else {
                    throw SocketIOError(.malformedPacket, "placeholder refers to a missing attachment")
                }
                return .binary(attachments[index])
            }
            return .object(try members.mapValues { try reconstruct($0, attachments) })
        default:
            return value
        }
    }
}

/// Turns the Engine.IO messages of one connection into whole Socket.IO packets, joining binary
/// packets with the attachments that follow them.
///
/// The attachments one packet collects are bounded by ``maximumAttachmentBytes`` in total, so a
/// packet announcing many large attachments cannot reserve unbounded memory while they arrive.
public struct SocketIOPacketAssembler: Sendable {
    /// The largest total size, in bytes, of the attachments of one packet.
    public let maximumAttachmentBytes: Int
    private var pending: SocketIOPacket?
    private var attachments: [[UInt8]] = []
    private var attachmentBytes = 0

    /// An assembler waiting for a packet, refusing more than `maximumAttachmentBytes` of attachments
    /// for one packet.
    public init(maximumAttachmentBytes: Int = 64 * 1024 * 1024) {
        self.maximumAttachmentBytes = max(0, maximumAttachmentBytes)
    }

    /// Takes a text message; returns the packet when it is complete (it has no attachments).
    ///
    /// - Throws: ``SocketIOError/malformedPacket`` for bad text, or text that arrives while attachments
    ///   of the previous packet are still expected.
    public mutating func receive(text: String) throws -> SocketIOPacket? {
        guard pending == nil else {
            pending = nil
            attachments = []
            throw SocketIOError(.malformedPacket, "a packet arrived while attachments were expected")
        }
        let packet = try SocketIOPacket.decode(text)
        if packet.attachmentCount == 0 {
            return packet.kind == .binaryEvent || packet.kind == .binaryAck ? try packet.reassembled(with: []) : packet
        }
        pending = packet
        attachments = []
        attachmentBytes = 0
        return nil
    }

    /// Takes a binary message; returns the packet once its last attachment arrived.
    ///
    /// - Throws: ``SocketIOError/unexpectedAttachment`` when no packet announced it;
    ///   ``SocketIOError/malformedPacket`` when a placeholder is out of range or the packet's
    ///   attachments exceed ``maximumAttachmentBytes`` together.
    public mutating func receive(binary: [UInt8]) throws -> SocketIOPacket? {
        guard let packet = pending else {
            throw SocketIOError(.unexpectedAttachment, "binary message without a binary packet")
        }
        // Compared as a difference, so no sum of wire lengths can overflow.
        guard binary.count <= maximumAttachmentBytes - attachmentBytes else {
            reset()
            throw SocketIOError(
                .malformedPacket, "the attachments of one packet exceed \(maximumAttachmentBytes) bytes")
        }
        attachmentBytes += binary.count
        attachments.append(binary)
        guard attachments.count == packet.attachmentCount else { return nil }
        let collected = attachments
        reset()
        return try packet.reassembled(with: collected)
    }

    /// Forgets any partly received packet, as after a reconnect.
    public mutating func reset() {
        pending = nil
        attachments = []
        attachmentBytes = 0
    }
}
