import TidingsCore

/// One message as the server sends it (content stays encrypted: the client never needs it in clear to sync).
public struct OpenMatesWireMessage: Sendable, Hashable {
    /// The message's ID (`{last 10 chars of chat id}-{uuid}`).
    public var messageID: String
    /// The chat it belongs to, when the message says so (content batches say it by their key instead).
    public var chatID: String?
    /// `user`, `assistant`, or whatever else the server sends.
    public var role: String
    /// Unix seconds.
    public var createdAt: Int
    /// The whole message object, kept so nothing the server sent is lost.
    public var raw: [String: JSONValue]

    /// Creates a message.
    public init(messageID: String, chatID: String? = nil, role: String, createdAt: Int, raw: [String: JSONValue] = [:])
    {
        self.messageID = messageID
        self.chatID = chatID
        self.role = role
        self.createdAt = createdAt
        var raw = raw
        raw["message_id"] = .string(messageID)
        raw["role"] = .string(role)
        raw["created_at"] = .int(Int64(createdAt))
        if let chatID { raw["chat_id"] = .string(chatID) }
        self.raw = raw
    }

    /// Reads a message sent as an object or as a JSON string of one; nil when it has no ID.
    public init?(wire value: JSONValue) {
        guard let members = value.omObjectOrEncodedObject, let id = members.omID("message_id") ?? members.omID("id")
        else { return nil }
        messageID = id
        chatID = members.omID("chat_id")
        role = members.omString("role") ?? "unknown"
        createdAt = members.omInt("created_at") ?? 0
        raw = members
    }

    /// Reads a `messages` field: nil when it is absent or JSON `null` ("keep what is local"), otherwise
    /// the messages it holds; elements that are not messages are dropped and counted in `dropped`.
    static func list(_ value: JSONValue?, dropped: inout Int) -> [OpenMatesWireMessage]? {
        guard let value, !value.isNull else { return nil }
        guard let elements = value.arrayValue else {
            dropped += 1
            return []
        }
        var messages: [OpenMatesWireMessage] = []
        messages.reserveCapacity(elements.count)
        for element in elements {
            if let message = OpenMatesWireMessage(wire: element) { messages.append(message) } else { dropped += 1 }
        }
        return messages
    }
}
