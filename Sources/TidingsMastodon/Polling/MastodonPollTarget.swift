/// The requests one polling tick may make for one account, in the priority order of seed 002 §3.
///
/// The polling scheduler decides *when* and *which*; the account's sync engine conforms and decides
/// *how* (which endpoint version, what is cached, what is stored). ``pollUnreadCount()`` makes one network
/// request. ``pollTimeline(_:)`` makes one in the common case, but while a page says newer statuses remain it
/// pages upward in the same call, up to ``MastodonAccountEngine/timelinePagesPerPoll`` requests.
/// ``pollNotifications()`` makes one when nothing is new, and otherwise pages upward along the `Link` header
/// until the server has no newer page, up to ``MastodonAccountEngine/notificationPagesPerPoll`` requests, so
/// that the newest are not left waiting until the capped unread count moves. Errors are `MastodonError`s: the
/// scheduler pauses on `rateLimited` until its `Retry-After` ends and stops on
/// `unauthorized`/`needsReauthentication`.
public protocol MastodonPollTarget: Sendable {
    /// Fetches the unread notifications count (v2, falling back to v1) and returns it.
    func pollUnreadCount() async throws -> Int

    /// Refreshes one timeline of the account with `min_id` = the newest cached status, joining a refresh
    /// of the same timeline already in flight, and pages upward while newer statuses remain (within a bound).
    ///
    /// - Parameter timeline: the timeline's name (`MastodonTimelineKey.timeline`), `home` unless another
    ///   is visible.
    func pollTimeline(_ timeline: String) async throws

    /// Fetches the notifications newer than the newest stored one (`min_id`) and stores them; the engine
    /// pages upward until the server has no newer page, within a bound of its own (see the protocol's note).
    func pollNotifications() async throws

    /// Whether the last ``pollTimeline(_:)`` of `timeline` left newer statuses on the server (its page bound
    /// ended it): the scheduler then polls on the adaptive table, not the stream's safety net, until caught up.
    func hasTimelineBacklog(_ timeline: String) async -> Bool
}
