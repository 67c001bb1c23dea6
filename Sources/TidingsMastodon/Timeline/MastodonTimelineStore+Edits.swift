import Foundation
import TidingsCore

extension MastodonTimelineStore {
    /// Deletes status `id` of `account`: its row, every entry pointing at it in every timeline of the
    /// account, and remembers it so a page fetched before the deletion cannot bring it back. Gaps that end up
    /// side by side merge; a gap left at either end of a timeline is dropped (refresh and load-older cover
    /// the ends).
    ///
    /// - Returns: How many timeline entries pointed at it.
    @discardableResult
    public func delete(account: String, id: ServerID, in db: SQLiteConnection) throws -> Int {
        let timelines = try db.fetchAll(
            String.self,
            "SELECT timeline FROM \(MastodonTimelineSchema.entries) WHERE account = ? AND status_id = ?",
            [account, id.rawValue])
        try db.execute(
            "DELETE FROM \(MastodonTimelineSchema.entries) WHERE account = ? AND status_id = ?", [account, id.rawValue])
        try db.execute(
            "DELETE FROM \(MastodonTimelineSchema.statuses) WHERE account = ? AND status_id = ?",
            [account, id.rawValue])
        try db.execute(
            "INSERT OR REPLACE INTO \(MastodonTimelineSchema.tombstones)(account, status_id, deleted_at) VALUES (?, ?, ?)",
            [account, id.rawValue, nowMillis])
        for timeline in timelines {
            try tidyGaps(MastodonTimelineKey(account: account, timeline: timeline), in: db)
        }
        return timelines.count
    }

    /// Deletes status `id` of `account` in one transaction on the store's queue; see ``delete(account:id:in:)``.
    @discardableResult
    public func delete(account: String, id: ServerID) async throws -> Int {
        try await database.write { db in try self.delete(account: account, id: id, in: db) }
    }

    /// Replaces the payload of cached status `id` with `merge(old, new)`, keeping its positions in every
    /// timeline, and marks it edited.
    ///
    /// `merge` is where the app keeps the reader's own state (favourite, boost, bookmark, pin, mute, poll
    /// vote) from the old payload; the store knows no status type. A status that is not cached or was
    /// deleted is left alone.
    ///
    /// - Returns: Whether a cached status was replaced.
    /// - Throws: what `merge` throws (nothing is changed then), or a store error.
    @discardableResult
    public func edit(
        account: String, id: ServerID, payload: Data, in db: SQLiteConnection,
        merge: (_ old: Data, _ new: Data) throws -> Data
    ) throws -> Bool {
        guard let old = try status(account: account, id: id, in: db) else { return false }
        let merged = try merge(old.payload, payload)
        try db.execute(
            "UPDATE \(MastodonTimelineSchema.statuses) SET payload = ?, edited = 1, fetched_at = ? "
                + "WHERE account = ? AND status_id = ?",
            [try sealPayload(merged, account: account, id: id), nowMillis, account, id.rawValue])
        return true
    }

    /// ``edit(account:id:payload:in:merge:)`` in one transaction on the store's queue.
    @discardableResult
    public func edit(
        account: String, id: ServerID, payload: Data,
        merge: @escaping @Sendable (_ old: Data, _ new: Data) throws -> Data
    ) async throws -> Bool {
        try await database.write { db in try self.edit(account: account, id: id, payload: payload, in: db, merge: merge)
        }
    }

    /// Merges adjacent gaps and drops gaps at either end of `key`'s timeline.
    func tidyGaps(_ key: MastodonTimelineKey, in db: SQLiteConnection) throws {
        let current = try entries(key, in: db)
        var previousWasGap = true  // a gap first in the timeline is at its end
        for (index, entry) in current.enumerated() {
            guard case .gap(let state) = entry.content else {
                previousWasGap = false
                continue
            }
            let atTop = !current[(index + 1)...].contains { !$0.isGap }
            if previousWasGap || atTop {
                try deleteEntry(key, position: entry.position, in: db)
                // Merging: a run of gaps keeps the open state if any of them is open, so what can still be
                // filled is tried; the unfillable part is found again when loaded.
                if !atTop && state == .open && index > 0, case .gap(.unfillable) = current[index - 1].content {
                    try markGap(key, position: current[index - 1].position, state: .open, in: db)
                }
            }
            previousWasGap = true
        }
    }
}
