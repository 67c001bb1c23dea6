import TidingsCore

/// What one re-check of cached statuses (``MastodonAccountEngine/recheck(_:timeline:limit:)``) found.
public struct MastodonRecheckReport: Sendable, Equatable {
    /// The statuses asked about, newest first.
    public var checked: [ServerID]
    /// The statuses the server no longer has: removed from the store with every entry and boost of them.
    public var deleted: [ServerID] = []
    /// The cached rows rewritten with the server's version (an edit, changed counters or reader state).
    public var updated: [ServerID] = []
    /// Whether the server was asked in batches (`GET /api/v1/statuses?id[]=`) rather than one status at a time.
    public var batched = false

    /// A report of a re-check of `checked` that found nothing yet.
    public init(checked: [ServerID]) { self.checked = checked }
}
