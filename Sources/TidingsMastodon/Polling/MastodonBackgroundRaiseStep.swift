/// Where a background refresh has got to for one account, as told to the account's raiser
/// (``MastodonBackgroundRaiser``), so that raising happens inside the refresh's budget rather than in a task the
/// system may suspend first (seed 002 §4).
public enum MastodonBackgroundRaiseStep: Sendable, Hashable {
    /// The account's new notifications are stored: raise what is new (the policy records each decision, so a run
    /// cut after this raised nothing that the next run raises again).
    case notificationsPolled
    /// The unread count was read (or the server has none): the badge and the widget line may change.
    case unreadCountRead
}

/// What a background refresh calls for an account at each ``MastodonBackgroundRaiseStep``, inside its budget
/// (a cancelled call is the budget's end: what it recorded stays recorded). TidingsPush's
/// `MastodonNotificationRaiser.raiseInBackgroundRefreshes(of:)` sets one.
public typealias MastodonBackgroundRaiser = @Sendable (MastodonBackgroundRaiseStep) async -> Void
