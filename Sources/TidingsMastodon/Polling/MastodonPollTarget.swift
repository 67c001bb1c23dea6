/// The requests one polling tick may make for one account, in the priority order of seed 002 §3.
///
/// The polling scheduler decides *when* and *which*; the account's sync engine conforms and decides
/// *how* (which endpoint version, what is cached, what is stored). Each method makes at most one
/// network request, so a tick of three calls stays within the document's three requests per account.
/// Errors are `MastodonError`s: the scheduler pauses on `rateLimited` until its `Retry-After` ends and
/// stops on `unauthorized`/`needsReauthentication`.
public protocol MastodonPollTarget: Sendable {
    /// Fetches the unread notifications count (v2, falling back to v1) and returns it.
    func pollUnreadCount() async throws -> Int

    /// Refreshes one timeline of the account with `min_id` = the newest cached status, joining a refresh
    /// of the same timeline already in flight.
    ///
    /// - Parameter timeline: the timeline's name (`MastodonTimelineKey.timeline`), `home` unless another
    ///   is visible.
    func pollTimeline(_ timeline: String) async throws

    /// Fetches the notifications newer than the newest stored one (`min_id`) and stores them.
    func pollNotifications() async throws
}
