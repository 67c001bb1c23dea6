import Foundation
import TidingsCore

/// The refresh cursor: where the server's last refresh page ended, when that is newer than every cached status.
///
/// Why: a refresh page whose newest rows the server filtered out (muted or blocked accounts) shows nothing
/// newer than the cache, so planning from the newest cached status alone would ask for the same filtered rows
/// forever. The `Link` header's `prev` cursor says how far the server paged; refreshing from it skips only rows
/// the reader can never see.
extension MastodonTimelineStore {
    /// The stored refresh cursor of `key`, or nil.
    public func newerCursor(_ key: MastodonTimelineKey, in db: SQLiteConnection) throws -> ServerID? {
        try db.fetchOne(
            String.self,
            "SELECT newer_min_id FROM \(MastodonTimelineSchema.cursors) WHERE account = ? AND timeline = ?",
            [key.account, key.timeline]
        ).map { ServerID($0) }
    }

    /// Keeps `cursor` for `key` when it is newer than the newest cached status and than the stored cursor;
    /// forgets the cursor when the timeline holds no status (a cold load starts from the top anyway).
    func recordNewerCursor(_ cursor: ServerID?, key: MastodonTimelineKey, in db: SQLiteConnection) throws {
        let current = try entries(key, in: db)
        guard let newest = current.last(where: { !$0.isGap })?.statusID else {
            try db.execute(
                "DELETE FROM \(MastodonTimelineSchema.cursors) WHERE account = ? AND timeline = ?",
                [key.account, key.timeline])
            return
        }
        guard let cursor, cursor > newest else { return }
        if let stored = try newerCursor(key, in: db), stored >= cursor { return }
        try db.execute(
            "INSERT OR REPLACE INTO \(MastodonTimelineSchema.cursors)(account, timeline, newer_min_id) VALUES (?, ?, ?)",
            [key.account, key.timeline, cursor.rawValue])
    }

    /// `plan` with its `min_id` raised to the stored cursor when that is newer than the newest cached status.
    func applyingNewerCursor(
        _ plan: MastodonTimelineFetchPlan, key: MastodonTimelineKey, in db: SQLiteConnection
    ) throws -> MastodonTimelineFetchPlan {
        guard case .newer(let minID) = plan.anchor, let cursor = try newerCursor(key, in: db), cursor > minID else {
            return plan
        }
        return MastodonTimelineFetchPlan(anchor: .newer(minID: cursor), limit: plan.limit)
    }
}
