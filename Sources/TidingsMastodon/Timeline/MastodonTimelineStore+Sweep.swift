import Foundation
import TidingsCore

extension MastodonTimelineStore {
    /// One retention pass in one transaction on the store's queue; see ``sweep(_:in:)``.
    @discardableResult
    public func sweep(_ retention: MastodonRetention = MastodonRetention()) async throws -> MastodonSweepReport {
        try await database.write { db in try self.sweep(retention, in: db) }
    }

    /// Deletes, oldest first, what `retention` does not keep — timeline entries past each timeline's
    /// limit, notifications and grouped notifications past each account's, statuses nothing points at that were fetched longer ago
    /// than the orphan age, expired deletion records — and at most `retention.maxRowsPerPass` rows, gap entries
    /// included.
    ///
    /// A timeline trimmed from below never ends in a gap. Deletion records are kept as long as statuses, so a
    /// page older than that could bring a deleted status back only after a week.
    @discardableResult
    public func sweep(_ retention: MastodonRetention, in db: SQLiteConnection) throws -> MastodonSweepReport {
        var report = MastodonSweepReport()
        var budget = max(0, retention.maxRowsPerPass)
        let keys = try db.fetchAll(
            "SELECT account, timeline, count(*) FROM \(MastodonTimelineSchema.entries) GROUP BY account, timeline"
        ) { row in (MastodonTimelineKey(account: try row[0], timeline: try row[1]), try row[2] as Int64) }
        for (key, count) in keys {
            let keep = Int64(max(0, key.isHome ? retention.homeEntries : retention.otherEntries))
            guard count > keep else { continue }
            guard budget > 0 else {
                report.moreRemains = true
                break
            }
            var excess = min(count - keep, Int64(budget))
            // The first row kept must not be a gap (the timeline would end in one): it goes with the trim when
            // the budget has room for it, otherwise the trim stops one row short, on a status.
            if try isGap(key, offset: excess, in: db) { excess += excess < Int64(budget) ? 1 : -1 }
            try db.execute(
                "DELETE FROM \(MastodonTimelineSchema.entries) WHERE rowid IN (SELECT rowid FROM "
                    + "\(MastodonTimelineSchema.entries) WHERE account = ? AND timeline = ? ORDER BY position LIMIT ?)",
                [key.account, key.timeline, excess])
            report.entries += db.changes
            budget -= db.changes
            if count - excess > keep { report.moreRemains = true }
            let dropped = try dropBottomGaps(key, budget: budget, in: db)
            report.entries += dropped
            budget -= dropped
        }
        let keepNotifications = Int64(max(0, retention.notifications))
        report.notifications += try trimOldestPerAccount(
            MastodonTimelineSchema.notifications, identity: "rowid", order: "length(notification_id), notification_id",
            keep: keepNotifications, budget: &budget, moreRemains: &report.moreRemains, in: db)
        report.notifications += try trimOldestPerAccount(
            MastodonTimelineSchema.notificationGroups, identity: "account, group_key",
            order: "length(most_recent_id), most_recent_id", keep: keepNotifications, budget: &budget,
            moreRemains: &report.moreRemains, in: db)
        let cutoff = nowMillis - Self.millis(retention.orphanAge)
        if budget > 0 {
            try db.execute(
                "DELETE FROM \(MastodonTimelineSchema.statuses) WHERE (account, status_id) IN ("
                    + "SELECT s.account, s.status_id FROM \(MastodonTimelineSchema.statuses) s WHERE s.fetched_at < ? "
                    + "AND NOT EXISTS (SELECT 1 FROM \(MastodonTimelineSchema.entries) e "
                    + "WHERE e.account = s.account AND e.status_id = s.status_id) "
                    + "AND NOT EXISTS (SELECT 1 FROM \(MastodonTimelineSchema.notifications) n "
                    + "WHERE n.account = s.account AND n.status_id = s.status_id) "
                    + "ORDER BY s.fetched_at LIMIT ?)",
                [cutoff, Int64(budget)])
            report.statuses = db.changes
            budget -= db.changes
        }
        if budget > 0 {
            try db.execute(
                "DELETE FROM \(MastodonTimelineSchema.tombstones) WHERE (account, status_id) IN ("
                    + "SELECT account, status_id FROM \(MastodonTimelineSchema.tombstones) WHERE deleted_at < ? "
                    + "ORDER BY deleted_at LIMIT ?)",
                [cutoff, Int64(budget)])
            report.tombstones = db.changes
            budget -= db.changes
        }
        if budget == 0 && !report.moreRemains {
            report.moreRemains = try hasExpired(before: cutoff, in: db)
        }
        return report
    }

    /// Deletes each account's oldest rows of `table` beyond `keep` (oldest by `order`), spending `budget`;
    /// returns how many went. `identity` names the columns that pick one row (`rowid`, or a key).
    private func trimOldestPerAccount(
        _ table: String, identity: String, order: String, keep: Int64, budget: inout Int, moreRemains: inout Bool,
        in db: SQLiteConnection
    ) throws -> Int {
        var deleted = 0
        let counts = try db.fetchAll("SELECT account, count(*) FROM \(table) GROUP BY account") { row in
            (try row[0] as String, try row[1] as Int64)
        }
        for (account, count) in counts {
            guard count > keep else { continue }
            guard budget > 0 else {
                moreRemains = true
                break
            }
            let excess = min(count - keep, Int64(budget))
            try db.execute(
                "DELETE FROM \(table) WHERE (\(identity)) IN (SELECT \(identity) FROM \(table) WHERE account = ? "
                    + "ORDER BY \(order) LIMIT ?)",
                [account, excess])
            deleted += db.changes
            budget -= db.changes
            if count - excess > keep { moreRemains = true }
        }
        return deleted
    }

    /// Whether orphaned statuses or deletion records older than `cutoff` remain.
    func hasExpired(before cutoff: Int64, in db: SQLiteConnection) throws -> Bool {
        let orphan = try db.fetchOne(
            Int64.self,
            "SELECT 1 FROM \(MastodonTimelineSchema.statuses) s WHERE s.fetched_at < ? "
                + "AND NOT EXISTS (SELECT 1 FROM \(MastodonTimelineSchema.entries) e "
                + "WHERE e.account = s.account AND e.status_id = s.status_id) "
                + "AND NOT EXISTS (SELECT 1 FROM \(MastodonTimelineSchema.notifications) n "
                + "WHERE n.account = s.account AND n.status_id = s.status_id) LIMIT 1",
            [cutoff])
        let tombstone = try db.fetchOne(
            Int64.self, "SELECT 1 FROM \(MastodonTimelineSchema.tombstones) WHERE deleted_at < ? LIMIT 1", [cutoff])
        return orphan != nil || tombstone != nil
    }

    /// Whether the entry at `offset` from the bottom of `key` (0: the oldest) is a gap.
    func isGap(_ key: MastodonTimelineKey, offset: Int64, in db: SQLiteConnection) throws -> Bool {
        guard offset >= 0 else { return false }
        let gap = try db.fetchOne(
            Int64.self,
            "SELECT status_id IS NULL FROM \(MastodonTimelineSchema.entries) WHERE account = ? AND timeline = ? "
                + "ORDER BY position LIMIT 1 OFFSET ?",
            [key.account, key.timeline, offset])
        return gap == 1
    }

    /// Deletes gap entries left at the bottom of `key` (one written before trims avoided them), within
    /// `budget`; returns how many went.
    func dropBottomGaps(_ key: MastodonTimelineKey, budget: Int, in db: SQLiteConnection) throws -> Int {
        var dropped = 0
        while dropped < budget, let first = try entries(key, in: db).first, first.isGap {
            try deleteEntry(key, position: first.position, in: db)
            dropped += 1
        }
        return dropped
    }

    static func millis(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        return overflow ? Int64.max / 2 : whole + attoseconds / 1_000_000_000_000_000
    }
}
