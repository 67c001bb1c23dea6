import TidingsCore

/// A chat as the store keeps it: its metadata, versions and how much of its content is on this device.
///
/// Stored models are strict (every field has a value); wire records are merged into them by the sync
/// rules (``OpenMatesSyncApplier``).
public struct OpenMatesChat: Sendable, Hashable {
    /// The chat's ID.
    public var chatID: String
    /// The metadata versions the store is at (messages, title, draft).
    public var versions: OpenMatesChatVersions
    /// The encrypted title, when known.
    public var encryptedTitle: String?
    /// Unix seconds of the latest message; the list's order after pinned.
    public var lastEdited: Int
    /// Pinned to the top of the list.
    public var pinned: Bool
    /// Hidden by the user.
    public var hidden: Bool
    /// Archived by the user.
    public var archived: Bool
    /// The parent chat of a sub-chat.
    public var parentChatID: String?
    /// Whether the chat is a sub-chat.
    public var isSubChat: Bool
    /// Unread messages, as the server counts them.
    public var unreadCount: Int
    /// The chat key wrapped by the master key.
    public var encryptedChatKey: String?
    /// The user's encrypted draft (its version is ``OpenMatesChatVersions/draftV``).
    public var encryptedDraft: String?
    /// Every metadata field the server sent, merged over time.
    public var details: [String: JSONValue]

    /// Creates a chat with no content stored.
    public init(
        chatID: String, versions: OpenMatesChatVersions = .init(), encryptedTitle: String? = nil, lastEdited: Int = 0,
        pinned: Bool = false, hidden: Bool = false, archived: Bool = false, parentChatID: String? = nil,
        isSubChat: Bool = false, unreadCount: Int = 0, encryptedChatKey: String? = nil, encryptedDraft: String? = nil,
        details: [String: JSONValue] = [:]
    ) {
        self.chatID = chatID
        self.versions = versions
        self.encryptedTitle = encryptedTitle
        self.lastEdited = lastEdited
        self.pinned = pinned
        self.hidden = hidden
        self.archived = archived
        self.parentChatID = parentChatID
        self.isSubChat = isSubChat
        self.unreadCount = unreadCount
        self.encryptedChatKey = encryptedChatKey
        self.encryptedDraft = encryptedDraft
        self.details = details
    }

    /// Whether the chat is a sub-chat of another.
    public var isSub: Bool { isSubChat || parentChatID != nil }
}

/// How much of a chat's content the store has.
public struct OpenMatesContentInfo: Sendable, Hashable {
    /// The messages' version the stored content is at; nil when no content was ever stored (metadata only).
    public var messagesV: Int?
    /// How many messages the server said it holds, when it said.
    public var serverMessageCount: Int?
    /// How many messages are stored.
    public var storedMessageCount: Int

    /// Creates content info.
    public init(messagesV: Int? = nil, serverMessageCount: Int? = nil, storedMessageCount: Int = 0) {
        self.messagesV = messagesV
        self.serverMessageCount = serverMessageCount
        self.storedMessageCount = storedMessageCount
    }

    /// Metadata only: no content was ever stored, so an empty message list is not the chat's real state.
    public var isMetadataOnly: Bool { messagesV == nil }

    /// Whether the stored messages are all the server has at `currentMessagesV`.
    public func isComplete(currentMessagesV: Int) -> Bool {
        guard let messagesV, messagesV >= currentMessagesV else { return false }
        return storedMessageCount >= (serverMessageCount ?? 0)
    }
}

/// A stored message (its content stays as the server sent it, encrypted).
public struct OpenMatesMessage: Sendable, Hashable {
    /// The chat it belongs to.
    public var chatID: String
    /// The message's ID.
    public var messageID: String
    /// `user` or `assistant` (the document's `message-user` / `message-assistant`).
    public var role: String
    /// Unix seconds.
    public var createdAt: Int
    /// The message object as the server sent it.
    public var raw: [String: JSONValue]

    /// Creates a message.
    public init(chatID: String, messageID: String, role: String, createdAt: Int, raw: [String: JSONValue] = [:]) {
        self.chatID = chatID
        self.messageID = messageID
        self.role = role
        self.createdAt = createdAt
        self.raw = raw
    }

    init(chatID: String, wire: OpenMatesWireMessage) {
        self.init(chatID: chatID, messageID: wire.messageID, role: wire.role, createdAt: wire.createdAt, raw: wire.raw)
    }
}
