import Foundation
import TidingsCore

/// One reaction on a message: who reacted with which emoji.
public struct KecalekReaction: Sendable, Hashable, Codable {
    /// The user who reacted.
    public var userID: String
    /// The emoji, as the server sent it.
    public var emoji: String

    /// Creates a reaction.
    public init(userID: String, emoji: String) {
        self.userID = userID
        self.emoji = emoji
    }

    init?(json: JSONValue) {
        guard let userID = json["user_id"]?.identifierValue, let emoji = json["emoji"]?.stringValue else {
            return nil
        }
        self.init(userID: userID, emoji: emoji)
    }

    var json: JSONValue { ["user_id": .string(userID), "emoji": .string(emoji)] }
}

/// One read receipt: who read a message and, when the server says, when.
public struct KecalekReadReceipt: Sendable, Hashable {
    /// The reader.
    public var userID: String
    /// When they read it, if the server said.
    public var readAt: KecalekTimestamp?

    /// Creates a receipt.
    public init(userID: String, readAt: KecalekTimestamp?) {
        self.userID = userID
        self.readAt = readAt
    }

    /// Accepts `{"user_id","read_at"}` or a bare user ID.
    init?(json: JSONValue) {
        if let userID = json.identifierValue {
            self.init(userID: userID, readAt: nil)
            return
        }
        guard let userID = json["user_id"]?.identifierValue else { return nil }
        self.init(userID: userID, readAt: json["read_at"]?.stringValue.flatMap(KecalekTimestamp.init))
    }

    var json: JSONValue {
        var members: [String: JSONValue] = ["user_id": .string(userID)]
        if let readAt { members["read_at"] = .string(readAt.text) }
        return .object(members)
    }
}

/// A message object as `get_messages` and `new_message` carry it: metadata plus an encrypted blob.
///
/// The wire form (documented in docs/backends/kecalek.md):
/// `{"message_id","conversation_id","sender_id","created_at","encrypted_payload","reactions","pinned","read_by"}`
/// where `encrypted_payload` is base64 of nonce ‖ ciphertext ‖ tag.
public struct KecalekWireMessage: Sendable, Hashable {
    /// The message's ID, unique within its conversation.
    public var messageID: String
    /// The conversation it belongs to.
    public var conversationID: String
    /// Who sent it.
    public var senderID: String
    /// When the server accepted it.
    public var createdAt: KecalekTimestamp
    /// The sealed payload bytes (nonce ‖ ciphertext ‖ tag for the shipped cipher).
    public var encryptedPayload: Data
    /// Reactions, in the server's order.
    public var reactions: [KecalekReaction]
    /// Whether the message is pinned.
    public var pinned: Bool
    /// Who has read it; never cached.
    public var readBy: [KecalekReadReceipt]

    /// Creates a wire message.
    public init(
        messageID: String, conversationID: String, senderID: String, createdAt: KecalekTimestamp,
        encryptedPayload: Data, reactions: [KecalekReaction] = [], pinned: Bool = false,
        readBy: [KecalekReadReceipt] = []
    ) {
        self.messageID = messageID
        self.conversationID = conversationID
        self.senderID = senderID
        self.createdAt = createdAt
        self.encryptedPayload = encryptedPayload
        self.reactions = reactions
        self.pinned = pinned
        self.readBy = readBy
    }

    /// Decodes one message leniently: optional fields may be missing, bad reactions and receipts are
    /// dropped, IDs may be numbers.
    ///
    /// - Parameters:
    ///   - json: One message object from a response or notification.
    ///   - fallback: The conversation ID used when the object omits `conversation_id`.
    /// - Throws: ``KecalekError/malformedMessage`` naming the first required field that is missing or wrong.
    public init(json: JSONValue, conversationID fallback: String?) throws {
        guard case .object = json else { throw KecalekError.malformedMessage("not an object") }
        guard let messageID = json["message_id"]?.identifierValue else {
            throw KecalekError.malformedMessage("missing message_id")
        }
        guard let conversationID = json["conversation_id"]?.identifierValue ?? fallback else {
            throw KecalekError(.malformedMessage, operation: messageID, detail: "missing conversation_id")
        }
        guard let senderID = json["sender_id"]?.identifierValue else {
            throw KecalekError(.malformedMessage, operation: messageID, detail: "missing sender_id")
        }
        guard let created = json["created_at"]?.stringValue, let createdAt = KecalekTimestamp(created) else {
            throw KecalekError(.malformedMessage, operation: messageID, detail: "missing or unreadable created_at")
        }
        guard let blob = json["encrypted_payload"]?.stringValue, let payload = Self.decodeBase64(blob) else {
            throw KecalekError(
                .malformedMessage, operation: messageID, detail: "missing or non-base64 encrypted_payload")
        }
        self.init(
            messageID: messageID, conversationID: conversationID, senderID: senderID, createdAt: createdAt,
            encryptedPayload: payload,
            reactions: json["reactions"]?.arrayValue?.compactMap(KecalekReaction.init(json:)) ?? [],
            pinned: json["pinned"]?.boolValue ?? false,
            readBy: json["read_by"]?.arrayValue?.compactMap(KecalekReadReceipt.init(json:)) ?? [])
    }

    /// The wire form of the message.
    public var json: JSONValue {
        [
            "message_id": .string(messageID), "conversation_id": .string(conversationID),
            "sender_id": .string(senderID), "created_at": .string(createdAt.text),
            "encrypted_payload": .string(encryptedPayload.base64EncodedString()),
            "reactions": .array(reactions.map(\.json)), "pinned": .bool(pinned),
            "read_by": .array(readBy.map(\.json)),
        ]
    }

    /// Standard or URL-safe base64, padded or not.
    static func decodeBase64(_ text: String) -> Data? {
        if let data = Data(base64Encoded: text) { return data }
        var normalized = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while normalized.count % 4 != 0 { normalized += "=" }
        return Data(base64Encoded: normalized)
    }
}
