import Foundation
import TidingsCore

/// A v1 notification: something that happened to the reader (a mention, a favourite, a follow…).
///
/// `id` and `type` are required (a notification of no known kind still decodes, as `.unknown`); the
/// account and status may be missing or null.
public struct MastodonNotification: Codable, Hashable, Sendable {
    /// The notification's ID (ordered as a `ServerID`).
    public var id: ServerID
    /// What happened; kinds this version does not know are kept.
    public var type: MastodonNotificationType
    /// When it happened.
    @MastodonDateCoding public var createdAt: Date?
    /// Who did it.
    public var account: MastodonAccount?
    /// The status concerned, for mentions, favourites, boosts, polls and edits.
    public var status: MastodonStatus?
    /// The key that groups it with others in v2 (Mastodon 4.3+); nil on older servers.
    public var groupKey: String?

    enum CodingKeys: String, CodingKey {
        case id, type, account, status
        case createdAt = "created_at"
        case groupKey = "group_key"
    }

    /// Decodes leniently: a missing `id` or `type` fails; everything else may be missing.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(ServerID.self, forKey: .id)
        type = try container.decode(MastodonNotificationType.self, forKey: .type)
        _createdAt = container.date(.createdAt)
        account = container.lenient(MastodonAccount.self, .account)
        status = container.lenient(MastodonStatus.self, .status)
        groupKey = container.lenient(String.self, .groupKey)
    }
}

/// One group of v2 grouped notifications (`NotificationGroup`): notifications of one kind about one
/// thing, e.g. three favourites of one status.
public struct MastodonNotificationGroup: Codable, Hashable, Sendable {
    /// The group's key, stable as the group grows.
    public var groupKey: String
    /// What happened.
    public var type: MastodonNotificationType
    /// How many notifications the group holds.
    public var notificationsCount: Int
    /// The newest notification of the group (often sent as a number).
    public var mostRecentNotificationID: ServerID?
    /// The oldest notification of the group on this page.
    public var pageMinID: ServerID?
    /// The newest notification of the group on this page.
    public var pageMaxID: ServerID?
    /// When the group's newest notification on this page happened.
    @MastodonDateCoding public var latestPageNotificationAt: Date?
    /// Some of the accounts involved, newest first; look them up in the page's `accounts`.
    public var sampleAccountIDs: [ServerID]
    /// The status concerned; look it up in the page's `statuses`.
    public var statusID: ServerID?

    enum CodingKeys: String, CodingKey {
        case type
        case groupKey = "group_key"
        case notificationsCount = "notifications_count"
        case mostRecentNotificationID = "most_recent_notification_id"
        case pageMinID = "page_min_id"
        case pageMaxID = "page_max_id"
        case latestPageNotificationAt = "latest_page_notification_at"
        case sampleAccountIDs = "sample_account_ids"
        case statusID = "status_id"
    }

    /// Decodes leniently: a missing `group_key` or `type` fails the group.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        groupKey = try container.decode(String.self, forKey: .groupKey)
        type = try container.decode(MastodonNotificationType.self, forKey: .type)
        notificationsCount = container.lenient(Int.self, .notificationsCount) ?? 1
        mostRecentNotificationID = container.lenient(ServerID.self, .mostRecentNotificationID)
        pageMinID = container.lenient(ServerID.self, .pageMinID)
        pageMaxID = container.lenient(ServerID.self, .pageMaxID)
        _latestPageNotificationAt = container.date(.latestPageNotificationAt)
        sampleAccountIDs = container.lossyArray(ServerID.self, .sampleAccountIDs)
        statusID = container.lenient(ServerID.self, .statusID)
    }
}

/// A page of v2 grouped notifications (`GroupedNotificationsResults`): the groups, and the accounts and
/// statuses they refer to, each list with its malformed elements skipped.
public struct MastodonGroupedNotifications: Codable, Hashable, Sendable {
    /// The groups, newest first.
    public var notificationGroups: [MastodonNotificationGroup]
    /// The accounts the groups refer to.
    public var accounts: [MastodonAccount]
    /// The statuses the groups refer to.
    public var statuses: [MastodonStatus]

    enum CodingKeys: String, CodingKey {
        case accounts, statuses
        case notificationGroups = "notification_groups"
    }

    /// Decodes leniently: missing lists are empty.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        notificationGroups = container.lossyArray(MastodonNotificationGroup.self, .notificationGroups)
        accounts = container.lossyArray(MastodonAccount.self, .accounts)
        statuses = container.lossyArray(MastodonStatus.self, .statuses)
    }

    /// The account a group names, by ID.
    public func account(_ id: ServerID) -> MastodonAccount? { accounts.first { $0.id == id } }

    /// The status a group names, by ID.
    public func status(_ id: ServerID) -> MastodonStatus? { statuses.first { $0.id == id } }
}

/// The answer of `GET /api/v{1,2}/notifications/unread_count`.
public struct MastodonUnreadCount: Codable, Hashable, Sendable {
    /// Unread notifications (v1) or groups (v2); Mastodon caps it (at 100 by default).
    public var count: Int

    /// A count.
    public init(count: Int) { self.count = count }
}
