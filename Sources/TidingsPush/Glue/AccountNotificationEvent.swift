import Foundation
import TidingsCore

/// What ``MastodonNotificationRaiser`` tells the app. The library never displays: the app shows, replaces and
/// withdraws notifications exactly as these events say.
public enum AccountNotificationEvent: Hashable, Sendable {
    /// The policy decided about one candidate: a `raise` or `update` carries the request to show (an update
    /// replaces the notification with the same identifier); `hold` and `drop` show nothing and are reported so
    /// that a log or a test can see why.
    case decided(AccountNotificationDecision)
    /// The account's digest summary, raised at a digest time.
    case digest(NotificationRequest)
    /// A push whose content could not be used (it did not decrypt, or named nothing the policy knows): on
    /// Apple the extension must show this generic notification, which the next poll replaces. Also another
    /// Nextcloud app's notification, worded generically where the platform requires one.
    case generic(NotificationRequest)
    /// The account signed out: withdraw these notifications and remove this channel group.
    case withdraw(NotificationPolicyStore.SignOut)
    /// These notifications are to go: read or removed elsewhere (a Nextcloud `delete`, `delete-multiple` or
    /// `delete-all` push), or the generic notification a push left, replaced by the account's next raise.
    /// Withdraw each; the account stays signed in.
    case withdrawRaised([String])
    /// The subscriber fell behind and missed this many events (re-read the state).
    case missed(Int)
}

/// One decision with where its candidate came from.
public struct AccountNotificationDecision: Hashable, Sendable {
    /// The account's key.
    public var account: String
    /// The candidate's notification ID (a group's newest).
    public var serverID: ServerID
    /// The path the candidate came by.
    public var origin: NotificationOrigin
    /// What the policy decided.
    public var decision: NotificationDecision

    /// A decision record.
    public init(account: String, serverID: ServerID, origin: NotificationOrigin, decision: NotificationDecision) {
        self.account = account
        self.serverID = serverID
        self.origin = origin
        self.decision = decision
    }
}
