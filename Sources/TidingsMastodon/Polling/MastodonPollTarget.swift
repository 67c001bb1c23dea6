/// The requests one polling tick may make for one account, in the priority order of seed 002 §3.
///
/// The polling scheduler decides *when* and *which*; the account's sync engine conforms and decides
/// *how* (which endpoint version, what is cached, what is stored). ``pollUnreadCount()`` and
/// ``pollTimeline(_:)`` make at most one network request each. ``pollNotifications()`` makes one in the
/// common case, but when a `min_id` page comes back full (more than a page arrived since the last poll)
/// the engine pages upward in the same call, up to
/// ``MastodonAccountEngine/notificationPagesPerPoll`` requests, so that the newest are not left waiting
/// until the capped unread count moves; a tick therefore makes 3 requests in the common case and at
/// most 2 + that bound. Errors are `MastodonError`s: the scheduler pauses on `rateLimited` until its `Retry-After` ends and
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

    /// Fetches the notifications newer than the newest stored one (`min_id`) and stores them; the engine
    /// pages upward while pages come back full, within a bound of its own (see the protocol's note).
    func pollNotifications() async throws
}
