import TidingsCore

extension OpenMatesStore {
    static func pendingActions(_ db: SQLiteConnection, _ sealing: OpenMatesStoreSealing) throws
        -> [OpenMatesPendingAction]
    {
        try db.fetchAll(
            "SELECT action_id, kind, chat_id, payload, tries, last_error FROM om_pending_actions ORDER BY action_id"
        ) { row in
            let id: Int64 = try row[0]
            let payload = try sealing.open(try row[3], "om_pending_actions", "payload", rowID: id)
            return OpenMatesPendingAction(
                id: id, kind: .init(rawValue: try row[1]), chatID: try row[2],
                payload: payload.flatMap { try? JSONValue(parsing: $0) }?.objectValue ?? [:], tries: try row[4],
                lastError: try row[5]
            ).migrated
        }
    }

    /// The pending actions in the order they were taken.
    public func pendingActions() throws -> [OpenMatesPendingAction] {
        try database.read { db in try Self.pendingActions(db, sealing) }
    }

    /// Queues an action durably, together with the local changes it makes (one transaction).
    ///
    /// - Returns: The action with its queue ID.
    @discardableResult
    public func enqueue(_ action: OpenMatesPendingAction, applying changes: [OpenMatesStoreChange] = []) throws
        -> OpenMatesPendingAction
    {
        try enqueue([action], applying: changes)[0]
    }

    /// Queues actions durably, in order, together with the local changes they make (one transaction: all or
    /// none).
    ///
    /// - Returns: The actions with their queue IDs.
    @discardableResult
    public func enqueue(_ actions: [OpenMatesPendingAction], applying changes: [OpenMatesStoreChange] = []) throws
        -> [OpenMatesPendingAction]
    {
        try database.write { db in
            var queued: [OpenMatesPendingAction] = []
            for action in actions {
                // The payload is sealed for its row, whose ID exists only once the row does.
                try db.execute(
                    "INSERT INTO om_pending_actions(kind, chat_id, payload, tries) VALUES (?, ?, '', 0)",
                    [action.kind.rawValue, action.chatID])
                var stored = action
                stored.id = db.lastInsertRowID
                let payload = try sealing.seal(
                    JSONValue.object(action.payload).jsonString(sortedKeys: true), "om_pending_actions", "payload",
                    rowID: stored.id)
                try db.execute("UPDATE om_pending_actions SET payload = ? WHERE action_id = ?", [payload, stored.id])
                stored.tries = 0
                queued.append(stored)
            }
            for change in changes { try Self.apply(change, db, sealing) }
            return queued
        }
    }

    /// Removes an action the server acknowledged (its local value no longer outranks the server's) together
    /// with the local changes its acknowledgement makes, in one transaction: all or none, so an action never
    /// leaves the queue without what its success wrote.
    public func acknowledge(_ actionID: Int64, applying changes: [OpenMatesStoreChange] = []) throws {
        let sealing = self.sealing
        try database.write { db in
            try db.execute("DELETE FROM om_pending_actions WHERE action_id = ?", [actionID])
            for change in changes { try Self.apply(change, db, sealing) }
        }
    }

    /// Records a failed try with its reason; the action stays queued.
    public func recordFailure(_ actionID: Int64, reason: String) throws {
        try database.write { db in
            try db.execute(
                "UPDATE om_pending_actions SET tries = tries + 1, last_error = ? WHERE action_id = ?",
                [reason, actionID])
        }
    }
}

extension OpenMatesStore {
    /// Removes an action that failed for good, records it with `reason` in ``failedActions()`` and undoes its
    /// local effect, in one transaction: a sent message is removed, a flag goes back, and a chat whose message
    /// was deleted locally becomes metadata-only (the deleted message is not stored any more), so opening it
    /// hydrates it from the server.
    public func abandon(_ action: OpenMatesPendingAction, reason: String) throws {
        let sealing = self.sealing
        try database.write { db in
            try db.execute("DELETE FROM om_pending_actions WHERE action_id = ?", [action.id])
            try Self.recordFailed(action, reason: reason, db, sealing)
            switch action.kind {
            case .storeMessage:
                if let messageID = action.messageID {
                    try db.execute(
                        "DELETE FROM om_messages WHERE chat_id = ? AND message_id = ?", [action.chatID, messageID])
                    try Self.recount(action.chatID, db)
                }
            case .deleteMessage:
                try db.execute("UPDATE om_chats SET content_v = NULL WHERE chat_id = ?", [action.chatID])
            case .pin: try Self.revert(action, column: "pinned", serverKeys: ["pinned", "is_pinned"], db, sealing)
            case .hide:
                try Self.revert(action, column: "hidden", serverKeys: ["is_hidden", "hidden"], db, sealing)
                try Self.revertKey(action, db, sealing)
            case OpenMatesPendingAction.Kind.legacyArchiveChat:
                try Self.revert(action, column: "archived", serverKeys: ["is_archived", "archived"], db, sealing)
            default: break
            }
        }
    }

    /// The stored chat a failed `action` concerns, when its local effect is to be undone: nil when the chat is not
    /// stored, or while a later action of the same kind on it is queued (its value stays shown).
    private static func chatToRevert(
        after action: OpenMatesPendingAction, _ db: SQLiteConnection, _ sealing: OpenMatesStoreSealing
    ) throws -> OpenMatesChat? {
        let later =
            try db.fetchOne(
                Int64.self, "SELECT COUNT(*) FROM om_pending_actions WHERE chat_id = ? AND kind = ?",
                [action.chatID, action.kind.rawValue]) ?? 0
        guard later == 0 else { return nil }
        return try db.fetchOne("SELECT \(chatColumns) FROM om_chats WHERE chat_id = ?", [action.chatID]) {
            try chat($0, sealing).0
        }
    }

    /// Puts a flag back after its action failed: to what the server last said (the chat's stored details keep
    /// the server's records even while a pending action outranks them), else to the value before the first
    /// queued action on the flag. While a later action on the same flag is queued, its value stays shown.
    private static func revert(
        _ action: OpenMatesPendingAction, column: String, serverKeys: [String], _ db: SQLiteConnection,
        _ sealing: OpenMatesStoreSealing
    ) throws {
        guard let stored = try chatToRevert(after: action, db, sealing) else { return }
        let server = serverKeys.lazy.compactMap { stored.details.omBool($0) }.first
        guard let value = server ?? action.payload.omBool(OpenMatesPendingAction.valueBeforeKey) else { return }
        try db.execute("UPDATE om_chats SET \(column) = ? WHERE chat_id = ?", [Int64(value ? 1 : 0), action.chatID])
    }

    /// Puts a hidden or unhidden chat's key back after the hide failed: the key the server last named (in the
    /// chat's details), else the key before the hide. While a later hide on the chat is queued, its key stays.
    private static func revertKey(
        _ action: OpenMatesPendingAction, _ db: SQLiteConnection, _ sealing: OpenMatesStoreSealing
    ) throws {
        guard var chat = try chatToRevert(after: action, db, sealing),
            let key = chat.details.omString("encrypted_chat_key")
                ?? action.payload.omString(OpenMatesPendingAction.keyBeforeKey)
        else { return }
        chat.encryptedChatKey = key
        try apply(.upsertChat(chat), db, sealing)
    }
}
