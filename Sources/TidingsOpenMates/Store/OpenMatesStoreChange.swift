import TidingsCore

/// One change the sync rules decided; the store applies a list of them in one transaction.
public enum OpenMatesStoreChange: Sendable, Hashable {
    /// Writes the chat's metadata (never its content columns).
    case upsertChat(OpenMatesChat)
    /// Replaces the chat's messages with `messages` (plus `keepMessageIDs`, which pending actions back) and
    /// records the content's version and the server's message count.
    case replaceContent(
        chatID: String, messages: [OpenMatesWireMessage], messagesV: Int?, serverMessageCount: Int?,
        checkpoints: JSONValue?, keepMessageIDs: Set<String>)
    /// Adds messages not stored yet (same version: duplicates are ignored), then records the version and count,
    /// and the compression checkpoints when the content carried them (none keeps what is stored).
    case mergeMessages(
        chatID: String, messages: [OpenMatesWireMessage], messagesV: Int?, serverMessageCount: Int?,
        checkpoints: JSONValue? = nil)
    /// Removes one message.
    case deleteMessage(chatID: String, messageID: String)
    /// Removes the chat with its messages and leaves a tombstone, so no later record resurrects it.
    case deleteChat(chatID: String)
    /// Stores embeds, embed keys and code-run outputs.
    case putSide(OpenMatesSideData)
    /// Stores new-chat suggestions.
    case putSuggestions([[String: JSONValue]])
    /// Stores daily inspirations.
    case putDailyInspirations([[String: JSONValue]])
}

/// What the sync rules read of the store: every chat's metadata and content info, the tombstones and what
/// pending actions back.
public struct OpenMatesLocalView: Sendable, Hashable {
    /// Stored chats by ID.
    public var chats: [String: OpenMatesChat]
    /// Content info by chat ID (absent: metadata only).
    public var content: [String: OpenMatesContentInfo]
    /// Chats deleted by the server (or locally) that no record may bring back.
    public var tombstones: Set<String>
    /// Local values pending actions back.
    public var backing: OpenMatesPendingBacking

    /// Creates a view.
    public init(
        chats: [String: OpenMatesChat] = [:], content: [String: OpenMatesContentInfo] = [:],
        tombstones: Set<String> = [], backing: OpenMatesPendingBacking = .init()
    ) {
        self.chats = chats
        self.content = content
        self.tombstones = tombstones
        self.backing = backing
    }

    /// The content info of a chat (metadata only when none is stored).
    public func contentInfo(_ chatID: String) -> OpenMatesContentInfo { content[chatID] ?? OpenMatesContentInfo() }

    /// Applies changes to the view the way the store applies them to its tables, so a sequence of events can
    /// be planned against the state the previous ones left. Message counts are estimates (duplicates are not
    /// known here); the store's own counts are authoritative.
    public mutating func apply(_ changes: [OpenMatesStoreChange]) {
        for change in changes {
            switch change {
            case .upsertChat(let chat): chats[chat.chatID] = chat
            case .replaceContent(let id, let messages, let version, let count, _, let keep):
                content[id] = OpenMatesContentInfo(
                    messagesV: version ?? chats[id]?.versions.messagesV ?? 0, serverMessageCount: count,
                    storedMessageCount: messages.count + keep.count)
            case .mergeMessages(let id, let messages, let version, let count, _):
                var info = contentInfo(id)
                info.messagesV = max(info.messagesV ?? 0, version ?? 0)
                if let count { info.serverMessageCount = count }
                info.storedMessageCount += messages.count
                content[id] = info
            case .deleteMessage(let id, _):
                if var info = content[id] {
                    info.storedMessageCount = max(0, info.storedMessageCount - 1)
                    content[id] = info
                }
            case .deleteChat(let id):
                chats[id] = nil
                content[id] = nil
                tombstones.insert(id)
            case .putSide, .putSuggestions, .putDailyInspirations: break
            }
        }
    }
}
