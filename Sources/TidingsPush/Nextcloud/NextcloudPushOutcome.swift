/// What the app's glue does with one opened Nextcloud proxy push.
public enum NextcloudPushOutcome: Sendable, Hashable {
    /// A notification of a Nextcloud app to raise (after the policy decides); record the identifier
    /// it gets with ``NextcloudRaisedNotifications/record(account:nid:raisedIdentifier:)``.
    case raise(nid: Int64, app: String, subject: String, type: String?, id: String?)
    /// A Nextcloud Social push: the subject is only a hint, so poll the account's notifications
    /// (the Mastodon-compatible API) instead of raising from it.
    case pollNotifications(nid: Int64)
    /// Take these raised notifications down (their identifiers as the policy gave them; maybe none).
    case withdraw(raisedIdentifiers: [String])
}
