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
    /// - Cold or `min_id` page: statuses newer than the newest cached go on top (inside the gap on top, when
    ///   one is there). A `min_id` page is the rows just above its anchor, so when it is full
    ///   (``MastodonTimelinePage/isFull(limit:)``) newer statuses remain above it: a gap goes on top. Below it a
    ///   gap goes only when a full page is not shown to start right above the cache (it does not repeat the
    ///   newest cached status the plan anchored below).
    /// - `max_id` page: statuses older than the oldest cached go below; a page that is not full reached the end.
    /// - Gap page from the newer side (`max_id`): statuses strictly between the gap's neighbours go right
    ///   below the newer one; the gap closes when the page reaches the older neighbour, and is marked
    ///   unfillable when the page is empty or ends (not full) before it — the server's feed cap.
    /// - Gap page from the older side (`min_id`): its statuses go inside the gap with the gap kept below them
    ///   (a capped feed may have skipped what lies right above the older neighbour), and a second gap above
    ///   them when the page is full and does not reach the newer neighbour; an empty page marks the gap
    ///   unfillable. Only a newer-side load closes a gap.
    /// - Statuses deleted locally (tombstoned), and boosts of them, are skipped; cached ones get the page's payload
    ///   in place.
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
            if let boosted = item.boosted, try isTombstoned(account: key.account, id: boosted, in: db) { continue }
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
            // An open gap on top: newer statuses remained above the last full refresh page. This page goes
            // inside it (it is anchored on the newest status, right below the gap).
            let topGap = current.last.flatMap { $0.content == .gap(.open) && newest != nil ? $0 : nil }
            var proven = false
            var cursorGap = false
            if case .newer(let minID) = plan.anchor, let newest {
                if minID < newest {
                    // Anchored one row below the newest: the page shows the newest again when it starts right
                    // above it.
                    proven = items.contains { $0.id == newest }
                } else if minID > newest {
                    // Planned from a cursor that a full page left: what lies between the newest status and the
                    // cursor is unproven, as below a full page.
                    cursorGap = try cursorRow(.newer, key: key, anchor: newest, in: db)?.needsGap ?? false
                }
            }
            // A full page not shown to start right above the cache may have skipped rows (a capped feed answers a
            // fallen-out anchor with its oldest rows): a gap between them, never a silent hole.
            let gapBelow = newest != nil && !proven && (full || cursorGap)
            // `min_id` pages are the rows just above the anchor: when full, what remains is above the page.
            var newerRemain = false
            if case .newer = plan.anchor, full { newerRemain = true }
            let above = fresh.filter { newest == nil || $0.id > newest! }
            guard !above.isEmpty else {
                if let topGap, !full {
                    // Nothing newer remains: the top is reached.
                    try deleteEntry(key, position: topGap.position, in: db)
                    result.gapClosed = true
                }
                result.cursorMoved = try recordCursors(
                    page, plan: plan, key: key, newerNeedsGap: newest != nil && (full || cursorGap), in: db)
                if full, !result.cursorMoved, case .newer(let minID) = plan.anchor, let newest, minID < newest {
                    // The page was spent on the newest and rows filtered below it: asked the same way, the next
                    // refresh would see the same. It anchors on the newest itself instead.
                    result.cursorMoved = try recordCursor(newest, side: .newer, key: key, atAnchor: true, in: db)
                }
                break
            }
            var position = (current.last?.position ?? 0) + 1
            if let topGap {
                try deleteEntry(key, position: topGap.position, in: db)
                position = topGap.position
            }
            if gapBelow {
                try insertEntry(key, position: position, content: .gap(.open), in: db)
                position += 1
                result.gapInserted = true
            }
            for item in above.reversed() {
                try insertStatusEntry(item, key: key, position: position, in: db)
                position += 1
            }
            if newerRemain {
                try insertEntry(key, position: position, content: .gap(.open), in: db)
                result.gapInserted = topGap == nil
                result.newerRemain = true
            } else if topGap != nil {
                result.gapClosed = true
            }
            result.inserted = above.count
            result.cursorMoved = try recordCursors(page, plan: plan, key: key, in: db)
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
            result.cursorMoved = try recordCursors(page, plan: plan, key: key, in: db)
        case .gap(let gapPosition, let side, _):
            guard let index = current.firstIndex(where: { $0.position == gapPosition }), current[index].isGap else {
                // Closed or trimmed meanwhile: the page has no place to go.
                break
            }
            let lower = current[..<index].last(where: { !$0.isGap })?.statusID
            let upper = current[(index + 1)...].first(where: { !$0.isGap })?.statusID
            let inside = fresh.filter { (lower == nil || $0.id > lower!) && (upper == nil || $0.id < upper!) }
            let count = Int64(inside.count)
            switch side {
            case .newer:
                // `max_id` pages are contiguous down from the newer neighbour: reaching the older one closes it.
                try insertInside(inside, key: key, after: gapPosition, extraSlots: 0, in: db)
                if let lower, items.contains(where: { $0.id <= lower }) {
                    try deleteEntry(key, position: gapPosition, in: db)
                    result.gapClosed = true
                } else if page.items.isEmpty || !full {
                    try markGap(key, position: gapPosition, state: .unfillable, in: db)
                    result.gapUnfillable = true
                }
            case .older:
                // A `min_id` page cannot prove it starts right above the older neighbour: a capped feed skips
                // what fell out of it. So the gap stays below the page, and only a load from the newer side
                // (which reaches the neighbour, or ends short) closes it or marks it unfillable.
                if page.items.isEmpty {
                    try markGap(key, position: gapPosition, state: .unfillable, in: db)
                    result.gapUnfillable = true
                    break
                }
                guard !inside.isEmpty else { break }
                let reachedUpper = upper == nil || !full || items.contains { $0.id >= upper! }
                try insertInside(inside, key: key, after: gapPosition, extraSlots: reachedUpper ? 0 : 1, in: db)
                if !reachedUpper {
                    try insertEntry(key, position: gapPosition + 1 + count, content: .gap(.open), in: db)
                    result.gapInserted = true
                }
            }
            result.inserted = inside.count
        }
        return result
    }

    /// Records the page's `Link` cursors on the ends it paged: the newer one for cold and refresh pages, the
    /// older one for cold and load-older pages.
    ///
    /// `newerNeedsGap`: see ``recordCursor(_:side:key:needsGap:in:)``; only for a page that inserted nothing
    /// (a cursor above inserted statuses lies within their page, right above them).
    func recordCursors(
        _ page: MastodonTimelinePage, plan: MastodonTimelineFetchPlan, key: MastodonTimelineKey,
        newerNeedsGap: Bool = false, in db: SQLiteConnection
    ) throws -> Bool {
        var moved = false
        switch plan.anchor {
        case .cold, .newer:
            moved = try recordCursor(page.newerCursor, side: .newer, key: key, needsGap: newerNeedsGap, in: db)
            if case .cold = plan.anchor {
                moved = try recordCursor(page.olderCursor, side: .older, key: key, in: db) || moved
            }
        case .older:
            moved = try recordCursor(page.olderCursor, side: .older, key: key, in: db)
            if !page.isFull(limit: plan.limit), try !entries(key, in: db).contains(where: { !$0.isGap }) {
                // An empty timeline paged to the end: nothing visible lies below, so refreshing it looks
                // above again (the newer cursor) instead of asking the end once more.
                try db.execute(
                    "DELETE FROM \(MastodonTimelineSchema.cursors) WHERE account = ? AND timeline = ? AND side = ?",
                    [key.account, key.timeline, CursorSide.older.rawValue])
                // The next refresh asks something else: worth another.
                if db.changes > 0 { moved = true }
            }
        case .gap: break
        }
        // Cursors kept while the timeline was empty belong to that empty timeline only: were it emptied again
        // later, they must not apply.
        if try entries(key, in: db).contains(where: { !$0.isGap }) {
            try db.execute(
                "DELETE FROM \(MastodonTimelineSchema.cursors) WHERE account = ? AND timeline = ? AND anchor_id IS NULL",
                [key.account, key.timeline])
        }
        return moved
    }

    /// Inserts `inside` (newest first) right above `position`, shifting what is above it up to make room for
    /// them and `extraSlots` more.
    func insertInside(
        _ inside: [MastodonTimelinePage.Item], key: MastodonTimelineKey, after position: Int64, extraSlots: Int64,
        in db: SQLiteConnection
    ) throws {
        guard !inside.isEmpty else { return }
        try db.execute(
            "UPDATE \(MastodonTimelineSchema.entries) SET position = position + ? "
                + "WHERE account = ? AND timeline = ? AND position > ?",
            [Int64(inside.count) + extraSlots, key.account, key.timeline, position])
        var next = position + 1
        for item in inside.reversed() {
            try insertStatusEntry(item, key: key, position: next, in: db)
            next += 1
        }
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
