import Foundation
import TidingsCore

/// Paging cursors: where the server's last page ended at either end of a timeline, when that is beyond every
/// cached status.
///
/// Why: a page whose rows the server filtered out (muted or blocked accounts, keyword filters that hide) shows
/// nothing beyond the cache, so planning from the cached ends alone would ask for the same filtered rows
/// forever. The `Link` header says how far the server paged; starting from there skips only rows the reader can
/// never see. A cursor is bound to the cached status it extends (its anchor): once that end of the timeline
/// changes (new rows, a deletion, a sweep), the cursor no longer applies, so it can never skip rows that were
/// cached and then removed.
extension MastodonTimelineStore {
    enum CursorSide: String { case newer, older }

    /// The refresh cursor of `key` that applies to the timeline as it is now, or nil.
    public func newerCursor(_ key: MastodonTimelineKey, in db: SQLiteConnection) throws -> ServerID? {
        let entries = try entries(key, in: db)
        return try cursor(.newer, key: key, anchor: entries.last(where: { !$0.isGap })?.statusID, in: db)
    }

    /// The load-older cursor of `key` that applies to the timeline as it is now, or nil.
    public func olderCursor(_ key: MastodonTimelineKey, in db: SQLiteConnection) throws -> ServerID? {
        let entries = try entries(key, in: db)
        return try cursor(.older, key: key, anchor: entries.first(where: { !$0.isGap })?.statusID, in: db)
    }

    func cursor(_ side: CursorSide, key: MastodonTimelineKey, anchor: ServerID?, in db: SQLiteConnection) throws
        -> ServerID?
    {
        try cursorRow(side, key: key, anchor: anchor, in: db)?.cursor
    }

    /// The `side` cursor of `key` when it extends `anchor`, and whether a gap must go between the anchor and
    /// whatever is found above the cursor.
    func cursorRow(_ side: CursorSide, key: MastodonTimelineKey, anchor: ServerID?, in db: SQLiteConnection) throws
        -> (cursor: ServerID, needsGap: Bool)?
    {
        let row: (String, String?, Bool)? = try db.fetchOne(
            "SELECT cursor_id, anchor_id, needs_gap FROM \(MastodonTimelineSchema.cursors) "
                + "WHERE account = ? AND timeline = ? AND side = ?",
            [key.account, key.timeline, side.rawValue]
        ) { row in (try row[0], try row[1], try row[2]) }
        guard let (cursor, stored, needsGap) = row, stored.map({ ServerID($0) }) == anchor else { return nil }
        return (ServerID(cursor), needsGap)
    }

    /// Keeps `candidate` as the `side` cursor of `key` when it lies beyond the cached end on that side (and
    /// beyond the cursor that already applies there).
    ///
    /// - Returns: Whether a cursor moved: the server paged past rows it did not show.
    ///
    /// `needsGap` (newer side): the page that moved it was full, so it may not have started right above the
    /// anchor (a capped feed skips what fell out of it); statuses later found above the cursor then get a gap
    /// below them, exactly as a full refresh page does.
    ///
    /// `atAnchor`: also keep a candidate equal to the anchor (a refresh then anchors on the newest itself rather
    /// than one row below it).
    @discardableResult
    func recordCursor(
        _ candidate: ServerID?, side: CursorSide, key: MastodonTimelineKey, needsGap: Bool = false,
        atAnchor: Bool = false, in db: SQLiteConnection
    ) throws -> Bool {
        guard let candidate else { return false }
        let entries = try entries(key, in: db)
        let anchor =
            side == .newer
            ? entries.last(where: { !$0.isGap })?.statusID : entries.first(where: { !$0.isGap })?.statusID
        if let anchor, atAnchor ? candidate != anchor : (side == .newer ? candidate <= anchor : candidate >= anchor) {
            return false
        }
        if let current = try cursor(side, key: key, anchor: anchor, in: db),
            side == .newer ? candidate <= current : candidate >= current
        {
            return false
        }
        try db.execute(
            "INSERT OR REPLACE INTO \(MastodonTimelineSchema.cursors)"
                + "(account, timeline, side, cursor_id, anchor_id, needs_gap) VALUES (?, ?, ?, ?, ?, ?)",
            [key.account, key.timeline, side.rawValue, candidate.rawValue, anchor?.rawValue, needsGap])
        return true
    }

    /// `plan` starting from the cursor that applies on its side, when there is one: a refresh above the
    /// newer cursor, a load of older rows below the older cursor (on an empty timeline too).
    func applyingCursors(
        _ plan: MastodonTimelineFetchPlan, request: MastodonTimelineRequest, key: MastodonTimelineKey,
        in db: SQLiteConnection
    ) throws -> MastodonTimelineFetchPlan {
        switch (request, plan.anchor) {
        case (.refresh, .cold):
            // Nothing cached yet, and the newest page was filtered empty: the newest statuses the reader can
            // see lie below it, so the cold load goes on downwards (newer ones come with the next refresh).
            if let cursor = try olderCursor(key, in: db) {
                return MastodonTimelineFetchPlan(anchor: .older(maxID: cursor), limit: plan.limit)
            }
            guard let cursor = try newerCursor(key, in: db) else { return plan }
            return MastodonTimelineFetchPlan(anchor: .newer(minID: cursor), limit: plan.limit)
        case (.refresh, .newer):
            guard let cursor = try newerCursor(key, in: db) else { return plan }
            if case .newer(let minID) = plan.anchor, cursor <= minID { return plan }
            return MastodonTimelineFetchPlan(anchor: .newer(minID: cursor), limit: plan.limit)
        case (.loadOlder, .older), (.loadOlder, .cold):
            guard let cursor = try olderCursor(key, in: db) else { return plan }
            if case .older(let maxID) = plan.anchor, cursor >= maxID { return plan }
            return MastodonTimelineFetchPlan(anchor: .older(maxID: cursor), limit: plan.limit)
        default:
            return plan
        }
    }
}
