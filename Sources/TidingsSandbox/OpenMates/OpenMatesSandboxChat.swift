import TidingsCore

/// One chat of the sandbox's user, as the server stores it.
public struct OpenMatesSandboxChat: Sendable, Hashable {
    /// The chat's ID.
    public var chatID: String
    /// The messages' version (one more per posted or deleted message).
    public var messagesV: Int
    /// The title's version.
    public var titleV: Int
    /// The draft's version.
    public var draftV: Int = 0
    /// The encrypted title (opaque to the server).
    public var encryptedTitle: String
    /// Unix seconds of the latest message.
    public var lastEdited: Int
    /// Pinned.
    public var pinned = false
    /// Hidden.
    public var hidden = false
    /// Archived.
    public var archived = false
    /// The parent chat of a sub-chat.
    public var parentChatID: String?
    /// The messages, oldest first (objects as sent).
    public var messages: [[String: JSONValue]]
    /// Embeds of the chat.
    public var embeds: [[String: JSONValue]] = []
    /// Embed keys of the chat.
    public var embedKeys: [[String: JSONValue]] = []
    /// The chat key wrapped by the user's master key (`encrypted_chat_key`), when the chat has one.
    public var encryptedChatKey: String?

    /// Creates a chat.
    public init(
        chatID: String, messagesV: Int, titleV: Int = 1, encryptedTitle: String, lastEdited: Int,
        parentChatID: String? = nil, messages: [[String: JSONValue]]
    ) {
        self.chatID = chatID
        self.messagesV = messagesV
        self.titleV = titleV
        self.encryptedTitle = encryptedTitle
        self.lastEdited = lastEdited
        self.parentChatID = parentChatID
        self.messages = messages
    }

    /// The metadata object of phase 1, phase 2 and cross-device events (never content).
    public var details: [String: JSONValue] {
        var details: [String: JSONValue] = [
            "chat_id": .string(chatID), "messages_v": .int(Int64(messagesV)), "title_v": .int(Int64(titleV)),
            "draft_v": .int(Int64(draftV)), "encrypted_title": .string(encryptedTitle),
            "last_edited_overall_timestamp": .int(Int64(lastEdited)), "pinned": .bool(pinned),
            "is_hidden": .bool(hidden), "is_archived": .bool(archived), "unread_count": 0,
        ]
        if let parentChatID { details["parent_chat_id"] = .string(parentChatID) }
        if let encryptedChatKey { details["encrypted_chat_key"] = .string(encryptedChatKey) }
        return details
    }
}
