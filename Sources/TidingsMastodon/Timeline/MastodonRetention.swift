/// How much of the cache a sweep keeps (defaults from the Aloha Social data model).
public struct MastodonRetention: Sendable, Equatable {
    /// Entries kept in each account's home timeline (newest first, gaps included).
    public var homeEntries = 500
    /// Entries kept per other timeline key.
    public var otherEntries = 200
    /// Notifications kept per account (newest server IDs first).
    public var notifications = 500
    /// How long a status no entry or notification points at is kept after it was last fetched, and how long
    /// a deletion is remembered.
    public var orphanAge: Duration = .seconds(7 * 24 * 3600)
    /// The most rows one sweep pass deletes, so a pass is a short transaction.
    public var maxRowsPerPass = 2000

    /// The defaults: home 500, other timelines 200, notifications 500, 7 days, 2000 rows per pass.
    public init() {}
}

/// What one sweep pass deleted.
public struct MastodonSweepReport: Sendable, Equatable {
    /// Timeline entries trimmed past their timeline's limit.
    public var entries = 0
    /// Notifications trimmed past the per-account limit.
    public var notifications = 0
    /// Orphaned statuses removed.
    public var statuses = 0
    /// Expired deletion records removed.
    public var tombstones = 0
    /// Whether the pass stopped at ``MastodonRetention/maxRowsPerPass`` with more to delete: run another.
    public var moreRemains = false

    /// Every row the pass deleted.
    public var total: Int { entries + notifications + statuses + tombstones }

    /// An empty report.
    public init() {}
}
