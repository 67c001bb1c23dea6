import TidingsCore

/// A step of ``MastodonSync/syncNow(account:progress:)``, reported as it starts (for progress lines).
public enum MastodonSyncStep: Sendable, Hashable {
    /// The server's capabilities (fetched once, then kept).
    case capabilities
    /// Home, refreshed from its newest cached status.
    case home
    /// Notifications and the unread count.
    case notifications
    /// The server's read markers.
    case markers
    /// The newest cached Home statuses asked again (edits and deletions made on the server).
    case recheck
}

/// What one ``MastodonSync/syncNow(account:progress:)`` did.
public struct MastodonSyncReport: Sendable {
    /// The server's capabilities.
    public var capabilities: MastodonCapabilities
    /// What the Home refresh applied.
    public var home: MastodonTimelineApplyResult
    /// The unread notification count, when the server tells one.
    public var unread: Int?
    /// The re-check of the newest cached Home statuses; nil when it was skipped (the account's polling gate
    /// pauses at the server's reserve, or the policy's ``MastodonMaintenancePolicy/recheckLimit`` is 0).
    public var recheck: MastodonRecheckReport?
}
