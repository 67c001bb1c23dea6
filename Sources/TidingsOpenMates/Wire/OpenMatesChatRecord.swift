import TidingsCore

/// A chat's metadata as one sync record carries it (phase 1's `chat_details`, a phase 2 entry, a
/// `chat_update`…). Fields the record does not carry are nil: absent is never "cleared".
public struct OpenMatesChatRecord: Sendable, Hashable {
    /// The chat's ID.
    public var chatID: String
    /// The versions the record states; a component it does not state is nil.
    public var messagesV: Int?
    /// See ``messagesV``.
    public var titleV: Int?
    /// See ``messagesV``.
    public var draftV: Int?
    /// The encrypted title, when present.
    public var encryptedTitle: String?
    /// Unix seconds of the latest message (the list's order after pinned).
    public var lastEdited: Int?
    /// Pinned to the top of the list.
    public var pinned: Bool?
    /// Hidden by the user.
    public var hidden: Bool?
    /// Archived by the user.
    public var archived: Bool?
    /// The parent chat, for a sub-chat.
    public var parentChatID: String?
    /// Whether the server marks it a sub-chat (`is_sub_chat`), even without a parent ID.
    public var isSubChat: Bool?
    /// Unread messages for this user.
    public var unreadCount: Int?
    /// The chat key wrapped by the user's master key.
    public var encryptedChatKey: String?
    /// The encrypted draft, when the record carries one.
    public var encryptedDraft: String?
    /// The fields as sent (merged into the stored metadata, absent keys kept).
    public var raw: [String: JSONValue]

    /// Creates a record.
    public init(
        chatID: String, messagesV: Int? = nil, titleV: Int? = nil, draftV: Int? = nil, encryptedTitle: String? = nil,
        lastEdited: Int? = nil, pinned: Bool? = nil, hidden: Bool? = nil, archived: Bool? = nil,
        parentChatID: String? = nil, isSubChat: Bool? = nil, unreadCount: Int? = nil, encryptedChatKey: String? = nil,
        encryptedDraft: String? = nil, raw: [String: JSONValue] = [:]
    ) {
        self.chatID = chatID
        self.messagesV = messagesV
        self.titleV = titleV
        self.draftV = draftV
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
        self.raw = raw
    }

    /// Whether the record describes a sub-chat.
    public var isSub: Bool { parentChatID != nil || isSubChat == true }

    /// Reads a record from a chat details object; `fallbackID` names the chat when the object does not.
    /// Nil when no chat ID is known.
    public init?(details members: [String: JSONValue], fallbackID: String? = nil) {
        guard let id = members.omID("chat_id") ?? members.omID("id") ?? fallbackID else { return nil }
        let versions = members["versions"]?.objectValue ?? [:]
        self.init(
            chatID: id,
            messagesV: members.omInt("messages_v") ?? versions.omInt("messages_v"),
            titleV: members.omInt("title_v") ?? versions.omInt("title_v"),
            draftV: members.omInt("draft_v") ?? versions.omInt("draft_v"),
            encryptedTitle: members.omString("encrypted_title"),
            lastEdited: members.omInt("last_edited_overall_timestamp"),
            pinned: members.omBool("pinned") ?? members.omBool("is_pinned"),
            hidden: members.omBool("is_hidden") ?? members.omBool("hidden"),
            archived: members.omBool("is_archived") ?? members.omBool("archived"),
            parentChatID: members.omID("parent_chat_id") ?? members.omID("parent_id"),
            isSubChat: members.omBool("is_sub_chat"),
            unreadCount: members.omInt("unread_count"),
            encryptedChatKey: members.omString("encrypted_chat_key"),
            encryptedDraft: members.omString("encrypted_draft_md"),
            raw: members)
    }

    /// Reads a phase 2 / phase 3 entry: `{chat_details, user_encrypted_draft_content?, user_draft_version_db?}`
    /// as a cold cache sends it, or the details object itself.
    init?(entry members: [String: JSONValue]) {
        let details = members["chat_details"]?.objectValue ?? members
        guard var record = OpenMatesChatRecord(details: details, fallbackID: members.omID("chat_id")) else {
            return nil
        }
        if let draft = members.omString("user_encrypted_draft_content") { record.encryptedDraft = draft }
        if let version = members.omInt("user_draft_version_db") { record.draftV = version }
        self = record
    }
}
