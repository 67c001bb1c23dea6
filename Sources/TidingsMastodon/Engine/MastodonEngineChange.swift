import TidingsCore

/// One change an account's sync engine made, as each subscriber of ``MastodonAccountEngine/changes()`` reads
/// them: the app re-reads what a change names from the store.
public enum MastodonEngineChange: Sendable, Equatable {
    /// A timeline of the account changed (a page was applied; `inserted` entries were added).
    case timeline(MastodonTimelineKey, inserted: Int)
    /// Statuses were removed because the server no longer has them.
    case deleted([ServerID])
    /// A cached status was replaced in place (an edit, a refetch, an action's answer).
    case statusUpdated(ServerID)
    /// `added` new notifications (or grouped notifications) were stored.
    case notifications(added: Int)
    /// The server's unread notifications count, and the account's unread flag (the sidebar dot).
    case unread(count: Int, flag: Bool)
    /// A read marker moved (locally or from the server).
    case marker(MastodonMarkerTimeline, ServerID)
    /// The server accepted this device's markers (`POST /api/v1/markers`); nil for a timeline not posted.
    case markersSaved(home: ServerID?, notifications: ServerID?)
    /// An optimistic action was written and is pending on the server.
    case actionPending(MastodonPendingAction)
    /// The server confirmed an action; its pending flag is gone.
    case actionConfirmed(MastodonPendingAction)
    /// The server refused an action for good: its effect was reverted, and `reason` says why.
    case actionFailed(MastodonPendingAction, reason: MastodonActionFailure)
    /// The cached relationship with this account changed: a follow or unfollow was written, answered or
    /// reverted (read it with ``MastodonAccountEngine/relationship(with:)``).
    case relationship(ServerID)
    /// The reader's filters changed on the server (read them with ``MastodonAccountEngine/filters()``).
    case filtersChanged
    /// The server refused the account's token: nothing is sent until the app signs it in again.
    case needsReauthentication
    /// The subscriber fell behind and missed this many changes: re-read what it shows.
    case missed(Int)
}
