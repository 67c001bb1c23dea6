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
                lastError: try row[5])
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
        try database.write { db in
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
            for change in changes { try Self.apply(change, db, sealing) }
            return stored
        }
    }

    /// Removes an action the server acknowledged: its local value no longer outranks the server's.
    public func acknowledge(_ actionID: Int64) throws {
        try database.write { db in try db.execute("DELETE FROM om_pending_actions WHERE action_id = ?", [actionID]) }
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
    /// Removes an action that failed for good and undoes its local effect, in one transaction: a sent
    /// message is removed, a flag goes back, and a chat whose message was deleted locally becomes
    /// metadata-only (the deleted message is not stored any more), so opening it hydrates it from the server.
    public func abandon(_ action: OpenMatesPendingAction) throws {
        try database.write { db in
            try db.execute("DELETE FROM om_pending_actions WHERE action_id = ?", [action.id])
            switch action.kind {
            case .sendMessage:
                if let messageID = action.messageID {
                    try db.execute(
                        "DELETE FROM om_messages WHERE chat_id = ? AND message_id = ?", [action.chatID, messageID])
                    try Self.recount(action.chatID, db)
                }
            case .deleteMessage:
                try db.execute("UPDATE om_chats SET content_v = NULL WHERE chat_id = ?", [action.chatID])
            case .pinChat: try Self.revert("pinned", action.payload.omBool("pinned"), action.chatID, db)
            case .archiveChat: try Self.revert("archived", action.payload.omBool("is_archived"), action.chatID, db)
            case .hideChat: try Self.revert("hidden", action.payload.omBool("is_hidden"), action.chatID, db)
            default: break
            }
        }
    }

    private static func revert(_ column: String, _ value: Bool?, _ chatID: String, _ db: SQLiteConnection) throws {
        guard let value else { return }
        try db.execute("UPDATE om_chats SET \(column) = ? WHERE chat_id = ?", [Int64(value ? 0 : 1), chatID])
    }
}
