import Foundation
import TidingsCore

extension MastodonTimelineStore {
    /// Deletes status `id` of `account`: its row, every entry pointing at it in every timeline of the
    /// account, and remembers it so a page fetched before the deletion cannot bring it back. Gaps that end up
    /// side by side merge; a gap left at the bottom is dropped (load-older covers it), and one on top unless it
    /// is open (it then says newer statuses remain; a refresh fills it).
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

    /// Merges adjacent gaps and drops gaps at the bottom of `key`'s timeline, and an unfillable one on top (an
    /// open gap on top says newer statuses remain).
    func tidyGaps(_ key: MastodonTimelineKey, in db: SQLiteConnection) throws {
        let current = try entries(key, in: db)
        var index = 0
        while index < current.count {
            guard current[index].isGap else {
                index += 1
                continue
            }
            // A run of gaps side by side becomes its lowest one, open if any of them is open, so what can still
            // be filled is tried (the unfillable part is found again when loaded).
            var end = index
            while end + 1 < current.count, current[end + 1].isGap { end += 1 }
            let run = current[index...end]
            let open = run.contains { $0.content == .gap(.open) }
            let atBottom = index == 0
            let atTop = end == current.count - 1
            for extra in run.dropFirst() { try deleteEntry(key, position: extra.position, in: db) }
            if atBottom || (atTop && !open) {
                try deleteEntry(key, position: current[index].position, in: db)
            } else if open, current[index].content != .gap(.open) {
                try markGap(key, position: current[index].position, state: .open, in: db)
            }
            index = end + 1
        }
    }
}
