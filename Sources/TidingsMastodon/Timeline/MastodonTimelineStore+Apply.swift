import Foundation
import TidingsCore

extension MastodonTimelineStore {
    /// Applies a page fetched for `plan` to `key`, in one transaction on the store's queue.
    ///
    /// - Throws: ``MastodonTimelineError`` for a corrupt row, `StoreError` from SQLite; nothing is applied then.
    @discardableResult
    public func apply(
        _ page: MastodonTimelinePage, for plan: MastodonTimelineFetchPlan, to key: MastodonTimelineKey
    ) async throws -> MastodonTimelineApplyResult {
        try await database.write { db in try self.apply(page, for: plan, to: key, in: db) }
    }

    /// Applies a page fetched for `plan` to `key` inside the caller's write transaction.
    ///
    /// - Cold or `min_id` page: statuses newer than the newest cached go on top; when the page is full
    ///   (``MastodonTimelinePage/isFull(limit:)``) a gap goes between them and what was cached.
    /// - `max_id` page: statuses older than the oldest cached go below; a page that is not full reached the end.
    /// - Gap page: statuses strictly between the gap's neighbours go inside it, next to the side loaded from.
    ///   The gap closes when the page reaches the far neighbour (or, from the older side, when nothing more
    ///   is newer); it is marked unfillable when the page is empty, or when a `max_id` page ends before the
    ///   far neighbour.
    /// - Statuses deleted locally (tombstoned) are skipped; cached ones get the page's payload in place.
    @discardableResult
    public func apply(
        _ page: MastodonTimelinePage, for plan: MastodonTimelineFetchPlan, to key: MastodonTimelineKey,
        in db: SQLiteConnection
    ) throws -> MastodonTimelineApplyResult {
        var result = MastodonTimelineApplyResult()
        let full = page.isFull(limit: plan.limit)
        let current = try entries(key, in: db)
        let cached = Set(current.compactMap(\.statusID))
        // Newest first, duplicates and deleted statuses dropped.
        var seen = Set<ServerID>()
        var items: [MastodonTimelinePage.Item] = []
        for item in page.items where seen.insert(item.id).inserted {
            if try isTombstoned(account: key.account, id: item.id, in: db) { continue }
            items.append(item)
        }
        items.sort { $0.id > $1.id }
        for item in items where cached.contains(item.id) {
            try upsertStatus(item, account: key.account, in: db)
            result.updated += 1
        }
        let fresh = items.filter { !cached.contains($0.id) }

        switch plan.anchor {
        case .cold, .newer:
            let newest = current.last(where: { !$0.isGap })?.statusID
            let above = fresh.filter { newest == nil || $0.id > newest! }
            guard !above.isEmpty else { break }
            var position = (current.last?.position ?? 0) + 1
            if newest != nil && full {
                try insertEntry(key, position: position, content: .gap(.open), in: db)
                position += 1
                result.gapInserted = true
            }
            for item in above.reversed() {
                try insertStatusEntry(item, key: key, position: position, in: db)
                position += 1
            }
            result.inserted = above.count
        case .older:
            let oldest = current.first(where: { !$0.isGap })?.statusID
            let below = fresh.filter { oldest == nil || $0.id < oldest! }
            var position = (current.first?.position ?? 0) - 1
            for item in below {
                try insertStatusEntry(item, key: key, position: position, in: db)
                position -= 1
            }
            result.inserted = below.count
            result.reachedEnd = !full
        case .gap(let gapPosition, let side, _):
            guard let index = current.firstIndex(where: { $0.position == gapPosition }), current[index].isGap else {
                // Closed or trimmed meanwhile: the page has no place to go.
                break
            }
            let lower = current[..<index].last(where: { !$0.isGap })?.statusID
            let upper = current[(index + 1)...].first(where: { !$0.isGap })?.statusID
            let inside = fresh.filter { (lower == nil || $0.id > lower!) && (upper == nil || $0.id < upper!) }
            let reachedFarSide: Bool
            switch side {
            case .newer: reachedFarSide = lower != nil && items.contains { $0.id <= lower! }
            case .older: reachedFarSide = upper != nil && items.contains { $0.id >= upper! }
            }
            if !inside.isEmpty {
                let count = Int64(inside.count)
                let shiftFrom = side == .newer ? gapPosition + 1 : gapPosition
                try db.execute(
                    "UPDATE \(MastodonTimelineSchema.entries) SET position = position + ? "
                        + "WHERE account = ? AND timeline = ? AND position >= ?",
                    [count, key.account, key.timeline, shiftFrom])
                var position = shiftFrom
                for item in inside.reversed() {
                    try insertStatusEntry(item, key: key, position: position, in: db)
                    position += 1
                }
                result.inserted = inside.count
            }
            let gapNow = side == .newer ? gapPosition : gapPosition + Int64(inside.count)
            if page.items.isEmpty {
                try markGap(key, position: gapNow, state: .unfillable, in: db)
                result.gapUnfillable = true
            } else if reachedFarSide || (side == .older && !full) {
                try deleteEntry(key, position: gapNow, in: db)
                result.gapClosed = true
            } else if side == .newer && !full {
                try markGap(key, position: gapNow, state: .unfillable, in: db)
                result.gapUnfillable = true
            }
        }
        return result
    }

    func insertStatusEntry(
        _ item: MastodonTimelinePage.Item, key: MastodonTimelineKey, position: Int64, in db: SQLiteConnection
    ) throws {
        try upsertStatus(item, account: key.account, in: db)
        try insertEntry(key, position: position, content: .status(item.id), in: db)
    }

    func insertEntry(
        _ key: MastodonTimelineKey, position: Int64, content: MastodonTimelineEntry.Content, in db: SQLiteConnection
    ) throws {
        let statusID: String?
        let gapState: Int64?
        switch content {
        case .status(let id): (statusID, gapState) = (id.rawValue, nil)
        case .gap(let state): (statusID, gapState) = (nil, state.rawValue)
        }
        try db.execute(
            "INSERT INTO \(MastodonTimelineSchema.entries)(account, timeline, position, status_id, gap_state) "
                + "VALUES (?, ?, ?, ?, ?)",
            [key.account, key.timeline, position, statusID, gapState])
    }

    func markGap(_ key: MastodonTimelineKey, position: Int64, state: MastodonGapState, in db: SQLiteConnection) throws {
        try db.execute(
            "UPDATE \(MastodonTimelineSchema.entries) SET gap_state = ? "
                + "WHERE account = ? AND timeline = ? AND position = ? AND status_id IS NULL",
            [state.rawValue, key.account, key.timeline, position])
    }

    func deleteEntry(_ key: MastodonTimelineKey, position: Int64, in db: SQLiteConnection) throws {
        try db.execute(
            "DELETE FROM \(MastodonTimelineSchema.entries) WHERE account = ? AND timeline = ? AND position = ?",
            [key.account, key.timeline, position])
    }
}
