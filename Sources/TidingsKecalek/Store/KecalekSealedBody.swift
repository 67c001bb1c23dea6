import Foundation

/// The plaintext of a cache row's sealed `body`: everything about the message except its ordering instant.
///
/// Layout (big-endian, strings and byte runs length-prefixed with a `UInt32`): conversation ID, message ID,
/// `created_at` in microseconds (`Int64`) and as the server's text, control flag (1 byte), sender ID, payload,
/// pin (1 byte), reaction count (`UInt32`) and each reaction's user ID and emoji, then zero bytes up to a
/// multiple of ``padding`` so that the sealed size tells a message's length only to within that many bytes.
/// Decoding checks every length against what is left and refuses non-zero padding.
enum KecalekSealedBody {
    /// Bodies are padded to a multiple of this many bytes.
    static let padding = 64

    /// The decoded body.
    struct Contents {
        var message: KecalekMessage
        var isControl: Bool
    }

    static func encode(_ message: KecalekMessage) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(message.payload.count + 128)
        func append(_ value: UInt32) { withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) } }
        func append(_ part: some Collection<UInt8>) {
            append(UInt32(truncatingIfNeeded: part.count))
            bytes.append(contentsOf: part)
        }
        append(Array(message.conversationID.utf8))
        append(Array(message.messageID.utf8))
        withUnsafeBytes(of: message.createdAt.microseconds.bigEndian) { bytes.append(contentsOf: $0) }
        append(Array(message.createdAt.text.utf8))
        bytes.append(message.isControl ? 1 : 0)
        append(Array(message.senderID.utf8))
        append(message.payload)
        bytes.append(message.pinned ? 1 : 0)
        append(UInt32(truncatingIfNeeded: message.reactions.count))
        for reaction in message.reactions {
            append(Array(reaction.userID.utf8))
            append(Array(reaction.emoji.utf8))
        }
        let remainder = bytes.count % padding
        if remainder != 0 { bytes += [UInt8](repeating: 0, count: padding - remainder) }
        return bytes
    }

    /// - Throws: ``KecalekError/cache`` for a body that is truncated, has trailing garbage, or a timestamp whose
    ///   text and microseconds disagree.
    static func decode(_ body: [UInt8]) throws -> Contents {
        var reader = Reader(buffer: body)
        let conversationID = try reader.string()
        let messageID = try reader.string()
        let micros = try reader.int64()
        let text = try reader.string()
        let isControl = try reader.byte() == 1
        let senderID = try reader.string()
        let payload = try reader.slice()
        let pinned = try reader.byte() == 1
        let count = try reader.uint32()
        var reactions: [KecalekReaction] = []
        reactions.reserveCapacity(Int(min(count, 64)))
        for _ in 0..<count {
            reactions.append(KecalekReaction(userID: try reader.string(), emoji: try reader.string()))
        }
        guard body[reader.index...].allSatisfy({ $0 == 0 }) else { throw Reader.malformed("trailing bytes") }
        let parsed = KecalekTimestamp(text)
        let createdAt =
            parsed?.microseconds == micros
            ? parsed ?? KecalekTimestamp(microseconds: micros) : KecalekTimestamp(microseconds: micros)
        return Contents(
            message: KecalekMessage(
                messageID: messageID, conversationID: conversationID, senderID: senderID, createdAt: createdAt,
                payload: Data(payload), reactions: reactions, pinned: pinned),
            isControl: isControl)
    }

    fileprivate struct Reader {
        let buffer: [UInt8]
        var index = 0

        mutating func byte() throws -> UInt8 {
            guard index < buffer.count else { throw Self.malformed("truncated") }
            defer { index += 1 }
            return buffer[index]
        }

        mutating func uint32() throws -> UInt32 {
            guard buffer.count - index >= 4 else { throw Self.malformed("truncated") }
            defer { index += 4 }
            return buffer[index..<(index + 4)].reduce(0) { $0 << 8 | UInt32($1) }
        }

        mutating func int64() throws -> Int64 {
            guard buffer.count - index >= 8 else { throw Self.malformed("truncated") }
            defer { index += 8 }
            return Int64(bitPattern: buffer[index..<(index + 8)].reduce(0) { $0 << 8 | UInt64($1) })
        }

        mutating func slice() throws -> ArraySlice<UInt8> {
            let count = Int(try uint32())
            guard count <= buffer.count - index else { throw Self.malformed("truncated") }
            defer { index += count }
            return buffer[index..<(index + count)]
        }

        mutating func string() throws -> String { String(decoding: try slice(), as: UTF8.self) }

        static func malformed(_ detail: String) -> KecalekError {
            KecalekError(.cache, operation: "cache.read", detail: "malformed row body (\(detail))")
        }
    }
}

/// The plaintext of a sync point's sealed `body`: the point in microseconds (`Int64`) and as the server's
/// text, then the largest page (`UInt32`), big-endian with the text length-prefixed like ``KecalekSealedBody``.
enum KecalekSealedSyncState {
    static func encode(_ state: KecalekSyncState) -> [UInt8] {
        var bytes: [UInt8] = []
        withUnsafeBytes(of: state.point.microseconds.bigEndian) { bytes.append(contentsOf: $0) }
        let text = Array(state.point.text.utf8)
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: text.count).bigEndian) { bytes.append(contentsOf: $0) }
        bytes += text
        let page = UInt32(clamping: max(0, state.largestPage))
        withUnsafeBytes(of: page.bigEndian) { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// - Throws: ``KecalekError/cache`` for a truncated body or one with trailing bytes.
    static func decode(_ body: [UInt8]) throws -> KecalekSyncState {
        var reader = KecalekSealedBody.Reader(buffer: body)
        let micros = try reader.int64()
        let text = try reader.string()
        let page = try reader.uint32()
        guard reader.index == body.count else { throw KecalekSealedBody.Reader.malformed("trailing bytes") }
        let parsed = KecalekTimestamp(text)
        let point =
            parsed?.microseconds == micros
            ? parsed ?? KecalekTimestamp(microseconds: micros) : KecalekTimestamp(microseconds: micros)
        return KecalekSyncState(point: point, largestPage: Int(page))
    }
}
