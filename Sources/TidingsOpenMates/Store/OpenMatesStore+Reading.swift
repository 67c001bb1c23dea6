import TidingsCore

/// What a cold start shows before the network: the chat list and the first chats' content.
public struct OpenMatesColdStart: Sendable, Hashable {
    /// Every stored chat in the list's order (pinned, then last edited).
    public var chats: [OpenMatesChat]
    /// Messages of the first chats (oldest first), by chat ID.
    public var messagesByChat: [String: [OpenMatesMessage]]
    /// Embeds of those chats (objects as sent).
    public var embeds: [[String: JSONValue]]
    /// Embed keys of those chats (objects as sent).
    public var embedKeys: [[String: JSONValue]]
}

extension OpenMatesStore {
    static let chatColumns = """
        chat_id, messages_v, title_v, draft_v, encrypted_title, last_edited, pinned, hidden, archived,
        parent_chat_id, is_sub, unread, chat_key, draft, details, content_v, server_message_count, stored_message_count
        """

    static func chat(_ row: SQLiteRow, _ sealing: OpenMatesStoreSealing) throws -> (OpenMatesChat, OpenMatesContentInfo)
    {
        let id: String = try row[0]
        func text(_ index: Int, _ column: String) throws -> String? {
            try sealing.open(try row[index], "om_chats", column, rowID: id)
        }
        let details = (try text(14, "details")).flatMap { try? JSONValue(parsing: $0) }?.objectValue ?? [:]
        let chat = OpenMatesChat(
            chatID: id, versions: .init(messagesV: try row[1], titleV: try row[2], draftV: try row[3]),
            encryptedTitle: try text(4, "encrypted_title"), lastEdited: try row[5], pinned: try row[6],
            hidden: try row[7], archived: try row[8], parentChatID: try row[9], isSubChat: try row[10],
            unreadCount: try row[11], encryptedChatKey: try text(12, "chat_key"), encryptedDraft: try text(13, "draft"),
            details: details)
        let info = OpenMatesContentInfo(
            messagesV: try row[15], serverMessageCount: try row[16], storedMessageCount: try row[17])
        return (chat, info)
    }

    /// Every stored chat in the list's order: pinned first, then the most recently edited.
    public func chatList() throws -> [OpenMatesChat] {
        try database.read { db in
            try db.fetchAll(
                "SELECT \(Self.chatColumns) FROM om_chats ORDER BY pinned DESC, last_edited DESC, chat_id"
            ) { try Self.chat($0, sealing).0 }
        }
    }

    /// One chat and its content info, or nil when it is not stored.
    public func chat(_ chatID: String) throws -> (chat: OpenMatesChat, content: OpenMatesContentInfo)? {
        try database.read { db in
            try db.fetchOne("SELECT \(Self.chatColumns) FROM om_chats WHERE chat_id = ?", [chatID]) {
                try Self.chat($0, sealing)
            }
        }
    }

    /// A chat's stored messages, oldest first.
    public func messages(chatID: String) throws -> [OpenMatesMessage] {
        try database.read { db in try Self.messages(db, chatID: chatID, sealing) }
    }

    static func messages(_ db: SQLiteConnection, chatID: String, _ sealing: OpenMatesStoreSealing) throws
        -> [OpenMatesMessage]
    {
        try db.fetchAll(
            "SELECT message_id, role, created_at, body FROM om_messages WHERE chat_id = ? ORDER BY created_at, message_id",
            [chatID]
        ) { row in
            let messageID: String = try row[0]
            let body = try sealing.open(
                try row[3], "om_messages", "body",
                rowID: OpenMatesStoreSealing.messageRowID(chatID: chatID, messageID: messageID))
            return OpenMatesMessage(
                chatID: chatID, messageID: messageID, role: try row[1], createdAt: try row[2],
                raw: body.flatMap { try? JSONValue(parsing: $0) }?.objectValue ?? [:])
        }
    }

    /// What the rules read: every chat, its content info, the tombstones and the pending actions' backing.
    public func localView() throws -> OpenMatesLocalView {
        try database.read { db in
            var view = OpenMatesLocalView()
            try db.forEachRow("SELECT \(Self.chatColumns) FROM om_chats") { row in
                let (chat, info) = try Self.chat(row, sealing)
                view.chats[chat.chatID] = chat
                if !info.isMetadataOnly { view.content[chat.chatID] = info }
            }
            view.tombstones = Set(try db.fetchAll(String.self, "SELECT chat_id FROM om_tombstones"))
            view.backing = OpenMatesPendingBacking(try Self.pendingActions(db, sealing))
            return view
        }
    }

    /// The client state every `phased_sync_request` carries.
    public func clientState() throws -> OpenMatesClientState {
        try database.read { db in
            var state = OpenMatesClientState()
            try db.forEachRow("SELECT chat_id, messages_v, title_v, draft_v, content_v FROM om_chats") { row in
                let id: String = try row[0]
                // A metadata-only chat declares messages_v 0: the server then still counts its content as missing.
                let messagesV: Int = try row[1]
                let contentV: Int? = try row[4]
                state.chatVersions[id] = .init(
                    messagesV: contentV.map { min($0, messagesV) } ?? 0, titleV: try row[2], draftV: try row[3])
                state.chatIDs.append(id)
            }
            state.chatIDs.sort()
            state.suggestionsCount = try db.fetchOne(Int.self, "SELECT count(*) FROM om_suggestions") ?? 0
            state.embedIDs = try db.fetchAll(String.self, "SELECT embed_id FROM om_embeds ORDER BY embed_id")
            return state
        }
    }

    /// The chat list and the first `contentChats` chats' messages, embeds and embed keys: what the app shows at
    /// cold start before the network.
    public func coldStart(contentChats: Int = 5) throws -> OpenMatesColdStart {
        try database.read { db in
            let chats = try db.fetchAll(
                "SELECT \(Self.chatColumns) FROM om_chats ORDER BY pinned DESC, last_edited DESC, chat_id"
            ) { try Self.chat($0, sealing).0 }
            var messages: [String: [OpenMatesMessage]] = [:]
            var embeds: [[String: JSONValue]] = []
            var keys: [[String: JSONValue]] = []
            for chat in chats.prefix(max(0, contentChats)) {
                messages[chat.chatID] = try Self.messages(db, chatID: chat.chatID, sealing)
                let hash = Self.hashedChatID(chat.chatID)
                embeds += try db.fetchAll("SELECT embed_id, body FROM om_embeds WHERE hashed_chat_id = ?", [hash]) {
                    row -> String? in
                    let id: String = try row[0]
                    return try sealing.open(try row[1], "om_embeds", "body", rowID: id)
                }.compactMap { $0.flatMap { try? JSONValue(parsing: $0) }?.objectValue }
                keys += try db.fetchAll("SELECT key_id, body FROM om_embed_keys WHERE hashed_chat_id = ?", [hash]) {
                    row -> String? in
                    let id: String = try row[0]
                    return try sealing.open(try row[1], "om_embed_keys", "body", rowID: id)
                }.compactMap { $0.flatMap { try? JSONValue(parsing: $0) }?.objectValue }
            }
            return OpenMatesColdStart(chats: chats, messagesByChat: messages, embeds: embeds, embedKeys: keys)
        }
    }

    /// The chat's compression checkpoints as the server last sent them with its content, or nil (none sent, or
    /// the chat is not stored).
    public func checkpoints(chatID: String) throws -> JSONValue? {
        try database.read { db in
            let sealed = try db.fetchOne("SELECT checkpoints FROM om_chats WHERE chat_id = ?", [chatID]) {
                row -> SQLiteValue in try row[0]
            }
            guard let sealed else { return nil }
            return try sealing.open(sealed, "om_chats", "checkpoints", rowID: chatID).flatMap {
                try? JSONValue(parsing: $0)
            }
        }
    }

    /// How many rows a table has (for summaries and tests).
    public func count(_ table: OpenMatesStoreTable) throws -> Int {
        try database.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \(table.rawValue)") ?? 0 }
    }
}

/// The store's tables, for ``OpenMatesStore/count(_:)``.
public enum OpenMatesStoreTable: String, Sendable, CaseIterable {
    /// Chats.
    case chats = "om_chats"
    /// Messages.
    case messages = "om_messages"
    /// Embeds.
    case embeds = "om_embeds"
    /// Embed keys.
    case embedKeys = "om_embed_keys"
    /// Code-run outputs.
    case codeRunOutputs = "om_code_run_outputs"
    /// New-chat suggestions.
    case suggestions = "om_suggestions"
    /// Daily inspirations.
    case dailyInspirations = "om_daily_inspirations"
    /// Tombstones of deleted chats.
    case tombstones = "om_tombstones"
    /// Pending offline actions.
    case pendingActions = "om_pending_actions"
    /// Offline actions that failed for good and were not dismissed.
    case failedActions = "om_failed_actions"
}
