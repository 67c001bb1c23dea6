import Foundation
import TidingsCore

/// The durable outbox of optimistic actions (`mastodon_outbox`): rows survive restarts, migrations and
/// recovery, and are sent in insertion order.
extension MastodonTimelineStore {
    /// Adds `action` on `target` for `account` and returns its row.
    public func enqueue(
        _ action: MastodonAction, target: ServerID, account: String, in db: SQLiteConnection
    ) throws -> MastodonPendingAction {
        try db.execute(
            "INSERT INTO \(MastodonTimelineSchema.outbox)(account, action, target_id, created_at) VALUES (?, ?, ?, ?)",
            [account, action.rawValue, target.rawValue, nowMillis])
        let id = try db.fetchOne(Int64.self, "SELECT last_insert_rowid()") ?? 0
        return MastodonPendingAction(id: id, action: action, target: target)
    }

    /// The pending actions of `account`, oldest first. Rows whose action this version does not know are
    /// skipped (left in place for the version that wrote them).
    public func pendingActions(account: String, in db: SQLiteConnection) throws -> [MastodonPendingAction] {
        try db.fetchAll(
            "SELECT id, action, target_id FROM \(MastodonTimelineSchema.outbox) WHERE account = ? ORDER BY id",
            [account]
        ) { row -> MastodonPendingAction? in
            guard let action = MastodonAction(rawValue: try row[1]) else { return nil }
            return MastodonPendingAction(id: try row[0], action: action, target: ServerID(try row[2] as String))
        }.compactMap { $0 }
    }

    /// Removes the outbox row `id` (confirmed, or reverted).
    public func removePending(_ id: Int64, account: String, in db: SQLiteConnection) throws {
        try db.execute(
            "DELETE FROM \(MastodonTimelineSchema.outbox) WHERE id = ? AND account = ?", [id, account])
    }

    /// Replaces the payload of cached status `id` without marking it edited (an action's answer, a refetch);
    /// false when it is not cached.
    @discardableResult
    public func replacePayload(account: String, id: ServerID, payload: Data, in db: SQLiteConnection) throws -> Bool {
        guard try status(account: account, id: id, in: db) != nil else { return false }
        try upsertStatus(.init(id: id, payload: payload), account: account, in: db)
        return true
    }
}
