import TidingsCore

/// Failed offline actions: written in the transaction that abandons the action, durable (a rebuilt file keeps
/// the readable ones, like the queue), kept by ``OpenMatesStore/resetLocalStore()`` and erased by logout.
extension OpenMatesStore {
    static let failedActionsTable = "om_failed_actions"

    /// Records `action` as failed for `reason` (inside the caller's transaction).
    static func recordFailed(
        _ action: OpenMatesPendingAction, reason: String, _ db: SQLiteConnection, _ sealing: OpenMatesStoreSealing
    ) throws {
        let payload = try sealing.seal(
            JSONValue.object(action.payload).jsonString(sortedKeys: true), failedActionsTable, "payload",
            rowID: action.id)
        try db.execute(
            """
            INSERT OR REPLACE INTO om_failed_actions(action_id, kind, chat_id, payload, tries, reason)
            VALUES (?, ?, ?, ?, ?, ?)
            """,
            [action.id, action.kind.rawValue, action.chatID, payload, Int64(action.tries), reason])
    }

    /// The offline actions that failed for good and were not dismissed, oldest first.
    public func failedActions() throws -> [OpenMatesFailedAction] {
        let sealing = self.sealing
        return try database.read { db in
            try db.fetchAll(
                "SELECT action_id, kind, chat_id, payload, tries, reason FROM om_failed_actions ORDER BY action_id"
            ) { row in
                let id: Int64 = try row[0]
                let payload = try sealing.open(try row[3], Self.failedActionsTable, "payload", rowID: id)
                let reason: String = try row[5]
                let action = OpenMatesPendingAction(
                    id: id, kind: .init(rawValue: try row[1]), chatID: try row[2],
                    payload: payload.flatMap { try? JSONValue(parsing: $0) }?.objectValue ?? [:], tries: try row[4],
                    lastError: reason)
                return OpenMatesFailedAction(action: action, reason: reason)
            }
        }
    }

    /// Forgets a failed action the user has seen; an unknown ID changes nothing.
    ///
    /// - Returns: Whether a record was removed.
    @discardableResult
    public func dismissFailedAction(id: Int64) throws -> Bool {
        try database.write { db in
            try db.execute("DELETE FROM om_failed_actions WHERE action_id = ?", [id])
            return db.changes > 0
        }
    }
}
