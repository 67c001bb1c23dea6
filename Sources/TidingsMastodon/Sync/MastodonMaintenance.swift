import TidingsCore

/// What ``MastodonSync/maintenance()`` runs and how often.
///
/// The retention limits are seed 002's (``MastodonRetention``: home 500, other timelines 200, notifications
/// 500, orphans after 7 days, at most 2000 rows per pass). Deletion re-checks ask the server about the newest
/// cached statuses of each account's Home; they cost requests, so they run at most once per
/// ``recheckInterval`` per account, through the account's rate budget.
public struct MastodonMaintenancePolicy: Sendable, Equatable {
    /// The retention limits of each sweep pass.
    public var retention = MastodonRetention()
    /// The most cached Home statuses re-checked per account and maintenance run (`0`: none).
    public var recheckLimit = 40
    /// The least time between two deletion re-checks of one account.
    public var recheckInterval: Duration = .seconds(3600)
    /// The image cache evicted down to its capacity on each run (nil: none).
    public var imageCache: MastodonImageCache?
    /// The staging directory of copied uploads swept on each run (nil: none).
    public var uploads: MastodonUploadSweep?

    /// The limits, re-checking 40 statuses per account at most hourly.
    public init() {}
}

/// What one maintenance run did.
public struct MastodonMaintenanceReport: Sendable, Equatable {
    /// The sweep of each store swept (keyed by the first account using it), one pass each.
    public var swept: [String: MastodonSweepReport] = [:]
    /// Accounts whose cached statuses were re-checked, and how many were found deleted.
    public var rechecked: [String: Int] = [:]
    /// Accounts not re-checked: checked within the interval, needing reauthentication, or offline.
    public var recheckSkipped: [String] = []
    /// Accounts whose re-check failed (nothing was deleted for them).
    public var recheckFailed: [String] = []
    /// What the image cache's eviction pass removed (nil without an image cache).
    public var imageCache: MastodonImageCache.EvictionReport?
    /// The copied uploads swept (file names).
    public var uploadsSwept: [String] = []
    /// Whether a store still has rows over its limits (another pass is worth it).
    public var moreRemains: Bool { swept.values.contains { $0.moreRemains } }

    /// An empty report.
    public init() {}
}
