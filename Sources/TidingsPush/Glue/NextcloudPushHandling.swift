/// What ``NextcloudPushHandler`` did with one verified proxy push of a Nextcloud account.
public enum NextcloudPushHandling: Hashable, Sendable {
    /// A Nextcloud Social push: the account's notifications were polled from the marker and these are the
    /// policy's decisions (each also reached the raiser's events); the notification the push announces (matched by
    /// order among what this poll raised or found freshly raised) is remembered under `nid` so that a later
    /// `delete` withdraws it.
    case polled(nid: Int64, decisions: [AccountNotificationDecision])
    /// `delete`, `delete-multiple` or `delete-all`: these raised notifications were withdrawn (also sent as
    /// ``AccountNotificationEvent/withdrawRaised(_:)``); empty when none of them was raised here.
    case withdrew(raisedIdentifiers: [String])
    /// A notification of another Nextcloud app (Talk, Files…) where the platform does not require one to be
    /// shown (Android): the app shows it as it sees fit and, to let a later `delete` withdraw it, records the
    /// identifier it raised with ``NextcloudPushHandler/recordRaised(nid:raisedIdentifier:)``.
    case otherApp(nid: Int64, app: String, subject: String, type: String?, id: String?)
    /// A notification of another Nextcloud app where the platform requires one (Apple): the policy worded
    /// it (``NotificationContentBuilder/otherApp(account:nid:app:subject:context:)``), it was sent as
    /// ``AccountNotificationEvent/generic(_:)`` and its identifier recorded under `nid`, so the server's
    /// `delete` withdraws it.
    case otherAppRaised(nid: Int64, app: String, request: NotificationRequest)
    /// The activation push of the account's Nextcloud Web Push subscription: its token went back to the server
    /// (``NextcloudWebPushDevice/open(_:)``); nothing is raised or withdrawn.
    case activated(NextcloudWebPushState)
}
