import TidingsCore

extension OpenMatesStore {
    /// Applies `changes` in one transaction, then evicts chats beyond ``maximumChats``: either every change
    /// is stored or none is.
    ///
    /// - Throws: `StoreError` from SQLite; nothing is half-applied.
    public func apply(_ changes: [OpenMatesStoreChange]) throws {
        guard !changes.isEmpty else { return }
        try database.write { db in
            for change in changes { try Self.apply(change, db, sealing) }
            try Self.evict(db, keep: maximumChats)
        }
    }

    static func apply(_ change: OpenMatesStoreChange, _ db: SQLiteConnection, _ sealing: OpenMatesStoreSealing) throws {
        switch change {
        case .upsertChat(let chat): try upsert(chat, db, sealing)
        case .replaceContent(let chatID, let messages, let version, let count, let checkpoints, let keep):
            try db.execute(
                "DELETE FROM om_messages WHERE chat_id = ? AND message_id NOT IN (SELECT value FROM json_each(?))",
                [chatID, JSONValue.array(keep.sorted().map(JSONValue.string)).jsonString()])
            for message in messages { try insert(message, chatID: chatID, db, sealing, replace: true) }
            try db.execute(
                "UPDATE om_chats SET content_v = ?, server_message_count = ?, checkpoints = ? WHERE chat_id = ?",
                [
                    version.map(Int64.init), count.map(Int64.init),
                    try sealing.seal(checkpoints?.jsonString(), "om_chats", "checkpoints", rowID: chatID), chatID,
                ])
            try recount(chatID, db)
        case .mergeMessages(let chatID, let messages, let version, let count, let checkpoints):
            for message in messages { try insert(message, chatID: chatID, db, sealing, replace: false) }
            try db.execute(
                """
                UPDATE om_chats SET content_v = max(coalesce(content_v, 0), coalesce(?, content_v, 0)),
                    server_message_count = coalesce(?, server_message_count),
                    checkpoints = coalesce(?, checkpoints) WHERE chat_id = ?
                """,
                [
                    version.map(Int64.init), count.map(Int64.init),
                    try sealing.seal(checkpoints?.jsonString(), "om_chats", "checkpoints", rowID: chatID), chatID,
                ])
            try recount(chatID, db)
        case .deleteMessage(let chatID, let messageID):
            try db.execute("DELETE FROM om_messages WHERE chat_id = ? AND message_id = ?", [chatID, messageID])
            try recount(chatID, db)
        case .deleteChat(let chatID):
            try db.execute("DELETE FROM om_messages WHERE chat_id = ?", [chatID])
            try db.execute("DELETE FROM om_chats WHERE chat_id = ?", [chatID])
            // Its embeds, keys and code-run outputs go at the end of the transaction
            // (removeSideDataOfUnstoredChats), with those of evicted chats.
            try db.execute(
                "INSERT OR REPLACE INTO om_tombstones(chat_id, deleted_at) VALUES (?, strftime('%s','now'))", [chatID])
        case .putSide(let side):
            for embed in side.embeds {
                guard let id = embed.omID("embed_id") ?? embed.omID("id") else { continue }
                try db.execute(
                    "INSERT OR REPLACE INTO om_embeds(embed_id, hashed_chat_id, body) VALUES (?, ?, ?)",
                    [
                        id, embed.omString("hashed_chat_id"),
                        try sealing.seal(JSONValue.object(embed).jsonString(), "om_embeds", "body", rowID: id),
                    ])
            }
            for key in side.embedKeys {
                guard let id = key.omID("id") ?? key.omID("key_id") ?? key.omID("hashed_embed_id") else { continue }
                try db.execute(
                    "INSERT OR REPLACE INTO om_embed_keys(key_id, hashed_embed_id, hashed_chat_id, body) VALUES (?, ?, ?, ?)",
                    [
                        id, key.omString("hashed_embed_id"), key.omString("hashed_chat_id"),
                        try sealing.seal(JSONValue.object(key).jsonString(), "om_embed_keys", "body", rowID: id),
                    ])
            }
            for output in side.codeRunOutputs {
                guard let id = output.omID("id") ?? output.omID("output_id") else { continue }
                try db.execute(
                    "INSERT OR REPLACE INTO om_code_run_outputs(output_id, chat_id, body) VALUES (?, ?, ?)",
                    [
                        id, try outputChatID(output, db),
                        try sealing.seal(
                            JSONValue.object(output).jsonString(), "om_code_run_outputs", "body", rowID: id),
                    ])
            }
        case .putSuggestions(let suggestions):
            for suggestion in suggestions {
                guard let id = suggestion.omID("id") ?? suggestion.omID("suggestion_id") else { continue }
                try db.execute(
                    "INSERT OR REPLACE INTO om_suggestions(suggestion_id, body) VALUES (?, ?)",
                    [
                        id,
                        try sealing.seal(
                            JSONValue.object(suggestion).jsonString(), "om_suggestions", "body", rowID: id),
                    ])
            }
        case .putDailyInspirations(let inspirations):
            for inspiration in inspirations {
                guard let id = inspiration.omID("inspiration_id") ?? inspiration.omID("id") else { continue }
                try db.execute(
                    "INSERT OR REPLACE INTO om_daily_inspirations(inspiration_id, body) VALUES (?, ?)",
                    [
                        id,
                        try sealing.seal(
                            JSONValue.object(inspiration).jsonString(), "om_daily_inspirations", "body", rowID: id),
                    ])
            }
        }
    }

    private static func upsert(_ chat: OpenMatesChat, _ db: SQLiteConnection, _ sealing: OpenMatesStoreSealing) throws {
        let id = chat.chatID
        let arguments: SQLiteArguments = [
            id, chat.versions.messagesV, chat.versions.titleV, chat.versions.draftV,
            try sealing.seal(chat.encryptedTitle, "om_chats", "encrypted_title", rowID: id),
            chat.lastEdited, chat.pinned, chat.hidden, chat.archived, chat.parentChatID, chat.isSubChat,
            chat.unreadCount, try sealing.seal(chat.encryptedChatKey, "om_chats", "chat_key", rowID: id),
            try sealing.seal(chat.encryptedDraft, "om_chats", "draft", rowID: id),
            try sealing.seal(
                JSONValue.object(chat.details).jsonString(sortedKeys: true), "om_chats", "details", rowID: id),
            hashedChatID(id),
        ]
        try db.execute(
            """
            INSERT INTO om_chats(chat_id, messages_v, title_v, draft_v, encrypted_title, last_edited, pinned, hidden,
                archived, parent_chat_id, is_sub, unread, chat_key, draft, details, hashed_id)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(chat_id) DO UPDATE SET messages_v = excluded.messages_v, title_v = excluded.title_v,
                draft_v = excluded.draft_v, encrypted_title = excluded.encrypted_title,
                last_edited = excluded.last_edited, pinned = excluded.pinned, hidden = excluded.hidden,
                archived = excluded.archived, parent_chat_id = excluded.parent_chat_id, is_sub = excluded.is_sub,
                unread = excluded.unread, chat_key = excluded.chat_key, draft = excluded.draft,
                details = excluded.details
            """, arguments)
    }

    private static func insert(
        _ message: OpenMatesWireMessage, chatID: String, _ db: SQLiteConnection, _ sealing: OpenMatesStoreSealing,
        replace: Bool
    ) throws {
        let body = try sealing.seal(
            JSONValue.object(message.raw).jsonString(), "om_messages", "body",
            rowID: OpenMatesStoreSealing.messageRowID(chatID: chatID, messageID: message.messageID))
        try db.execute(
            "INSERT OR \(replace ? "REPLACE" : "IGNORE") INTO om_messages(chat_id, message_id, role, created_at, body) VALUES (?, ?, ?, ?, ?)",
            [chatID, message.messageID, message.role, message.createdAt, body])
    }

    static func recount(_ chatID: String, _ db: SQLiteConnection) throws {
        try db.execute(
            """
            UPDATE om_chats SET stored_message_count = (SELECT count(*) FROM om_messages WHERE chat_id = ?)
            WHERE chat_id = ?
            """, [chatID, chatID])
    }

    /// Keeps the last `keep` chats (pinned first, then last edited) and every chat a pending action concerns,
    /// then removes the messages and side data of chats no longer stored (evicted now, or deleted in this
    /// transaction).
    static func evict(_ db: SQLiteConnection, keep: Int) throws {
        let count = try db.fetchOne(Int.self, "SELECT count(*) FROM om_chats") ?? 0
        if count > keep { try evictBeyond(keep, db) }
        try removeSideDataOfUnstoredChats(db)
    }

    private static func evictBeyond(_ keep: Int, _ db: SQLiteConnection) throws {
        try db.execute(
            """
            DELETE FROM om_chats WHERE chat_id NOT IN (
                SELECT chat_id FROM om_chats ORDER BY pinned DESC, last_edited DESC, chat_id LIMIT ?)
            AND chat_id NOT IN (SELECT chat_id FROM om_pending_actions)
            """, [keep])
        try db.execute("DELETE FROM om_messages WHERE chat_id NOT IN (SELECT chat_id FROM om_chats)")
    }
}
