/// What the polling scheduler knows of one account's unread-count endpoint
/// (`GET /api/v{2,1}/notifications/unread_count`). Nextcloud Social has none: it answers 404, so a tick that
/// began with the count would fail every time and never reach the timeline or the notifications.
///
/// Guarantees:
/// - The endpoint counts as missing after it answered "missing" (``isMissingAnswer(_:)``) on two calls in a
///   row, or on one when the account's capabilities say only v1 is asked (no v2 fallback is left to try).
/// - Any count answered starts the tally again.
struct MastodonUnreadCountSupport: Sendable, Hashable {
    private var misses = 0
    /// Whether the server is known to have no unread count: ticks skip it and poll notifications every time.
    private(set) var missing = false

    /// The endpoint answered a count.
    mutating func answered() { misses = 0 }

    /// The endpoint answered "missing"; `version1Asked`: the capabilities leave no v2-then-v1 fallback.
    mutating func missed(version1Asked: Bool) {
        misses += 1
        if version1Asked || misses >= 2 { missing = true }
    }

    /// Whether `error` says the endpoint does not exist: 404 or 410, 501, or unsupported.
    static func isMissingAnswer(_ error: any Error) -> Bool {
        guard let error = error as? MastodonError else { return false }
        return error == .notFound || error == .unsupported || error.status == 501
    }

    /// Whether the engine asks only v1 for these capabilities (as ``MastodonAccountEngine/pollUnreadCount()``).
    static func asksVersion1Only(_ capabilities: MastodonCapabilities?) -> Bool {
        capabilities.map { !$0.supportsGroupedNotifications } ?? false
    }
}
