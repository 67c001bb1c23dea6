import Foundation
import TidingsCore
import TidingsMastodon

/// Where a candidate notification was learnt of; the policy treats every origin alike, which is what makes
/// "raised at most once" hold across them.
public enum NotificationOrigin: String, Codable, Hashable, Sendable {
    /// A decrypted Web Push payload (content mode).
    case push
    /// A notifications poll.
    case poll
    /// The user stream's `notification` event.
    case stream
}

/// The person who caused a notification, as the content needs them.
public struct NotificationAuthor: Hashable, Sendable {
    /// The account's ID on the reader's server.
    public var id: ServerID?
    /// The display name; empty when unset (the handle is shown instead).
    public var displayName: String
    /// `user` or `user@domain`.
    public var handle: String
    /// The avatar's URL, nil for no image.
    public var avatar: URL?
    /// Whether the reader follows them (for the digest's exception and a post's actions).
    public var isFollowed: Bool

    /// An author.
    public init(id: ServerID?, displayName: String, handle: String, avatar: URL?, isFollowed: Bool = false) {
        self.id = id
        self.displayName = displayName
        self.handle = handle
        self.avatar = avatar
        self.isFollowed = isFollowed
    }

    /// The author of a Mastodon account, with whether the reader follows them.
    public init(_ account: MastodonAccount, isFollowed: Bool = false) {
        self.init(
            id: account.id, displayName: account.displayName, handle: account.acct, avatar: account.avatar,
            isFollowed: isFollowed)
    }

    /// The name to show: the display name, or the handle when it is empty.
    public var shownName: String {
        displayName.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty ? handle : displayName
    }
}

/// A `NotificationCandidate` is one thing the policy may tell the person about: a v1 notification, a v2 group,
/// or a pushed payload, for one signed-in account.
///
/// `serverID` is the notification's ID (a group's most recent notification): it orders the candidate against
/// the notifications marker and keys the raised set. A group also carries its `groupKey` and size, so a
/// growing group updates one notification in place.
public struct NotificationCandidate: Hashable, Sendable {
    /// The signed-in account it is for (the app's account key, e.g. `alice@example.social`).
    public var account: String
    /// The notification's ID (for a group, its most recent notification).
    public var serverID: ServerID
    /// The v2 group's key; nil for an ungrouped notification.
    public var groupKey: String?
    /// How many notifications the group holds (1 when ungrouped).
    public var groupCount: Int
    /// The group's oldest notification the poll's page saw (a v2 group's `page_min_id`); with ``serverID`` it
    /// bounds the notifications the group holds, so a group first seen by a poll finds the one a push showed
    /// on its own (``NotificationPolicyStore`` adopts that notification's request identifier). Nil otherwise.
    public var oldestMemberID: ServerID?
    /// Its category.
    public var category: NotificationCategory
    /// How the engine learnt of it.
    public var origin: NotificationOrigin
    /// Who caused it (a group's newest actor); nil when the server did not say.
    public var author: NotificationAuthor?
    /// The status concerned, when there is one.
    public var statusID: ServerID?
    /// The status's HTML content (or a pushed body, as plain text); empty when none.
    public var statusHTML: String
    /// The status's content warning; when set it is shown instead of the text.
    public var spoilerText: String
    /// The status's visibility; `.direct` makes a mention a private mention.
    public var visibility: MastodonVisibility?
    /// The conversation it belongs to (the status it answers, or itself), for the thread identifier.
    public var conversationID: ServerID?
    /// A pushed payload's own title (content mode); used as is instead of the engine's wording.
    public var pushedTitle: String?

    /// A candidate from its parts.
    public init(
        account: String, serverID: ServerID, category: NotificationCategory, origin: NotificationOrigin,
        groupKey: String? = nil, groupCount: Int = 1, author: NotificationAuthor? = nil, statusID: ServerID? = nil,
        statusHTML: String = "", spoilerText: String = "", visibility: MastodonVisibility? = nil,
        conversationID: ServerID? = nil, pushedTitle: String? = nil
    ) {
        self.account = account
        self.serverID = serverID
        self.category = category
        self.origin = origin
        self.groupKey = groupKey
        self.groupCount = max(1, groupCount)
        self.author = author
        self.statusID = statusID
        self.statusHTML = statusHTML
        self.spoilerText = spoilerText
        self.visibility = visibility
        self.conversationID = conversationID ?? statusID
        self.pushedTitle = pushedTitle
        self.oldestMemberID = nil
    }

    /// A candidate from a v1 notification (a poll's page or the stream's `notification` event); nil for a kind
    /// the policy never raises.
    ///
    /// - Parameters:
    ///   - notification: the notification as the server sent it.
    ///   - account: the account it belongs to (the raised set's key).
    ///   - origin: the path it came by (push, poll or stream).
    ///   - readerID: the signed-in account's own ID, which tells a reply from a mention.
    ///   - isFollowed: whether the reader follows the notification's account.
    public init?(
        _ notification: MastodonNotification, account: String, origin: NotificationOrigin, readerID: ServerID? = nil,
        isFollowed: Bool = false
    ) {
        let status = notification.status
        let isReply = readerID != nil && status?.inReplyToAccountID == readerID
        guard let category = NotificationCategory(type: notification.type, isReplyToReader: isReply) else {
            return nil
        }
        self.init(
            account: account, serverID: notification.id, category: category, origin: origin,
            groupKey: notification.groupKey,
            author: notification.account.map { NotificationAuthor($0, isFollowed: isFollowed) },
            statusID: status?.id, statusHTML: status?.content ?? "", spoilerText: status?.spoilerText ?? "",
            visibility: status?.visibility, conversationID: status?.inReplyToID ?? status?.id)
    }

    /// A candidate from one v2 group of a page; nil for a kind the policy never raises or a group without its
    /// most recent notification's ID.
    ///
    /// - Parameters:
    ///   - group: the group, as the page lists it.
    ///   - page: the page the group came in, which carries its accounts and statuses.
    ///   - account: the account it belongs to (the raised set's key).
    ///   - origin: the path it came by (push, poll or stream).
    ///   - readerID: the signed-in account's own ID, which tells a reply from a mention.
    ///   - followed: the IDs of the accounts the reader follows, among the page's accounts.
    public init?(
        _ group: MastodonNotificationGroup, page: MastodonGroupedNotifications, account: String,
        origin: NotificationOrigin, readerID: ServerID? = nil, followed: Set<ServerID> = []
    ) {
        guard let newest = group.mostRecentNotificationID ?? group.pageMaxID else { return nil }
        let status = group.statusID.flatMap(page.status)
        let isReply = readerID != nil && status?.inReplyToAccountID == readerID
        guard let category = NotificationCategory(type: group.type, isReplyToReader: isReply) else { return nil }
        let actor = group.sampleAccountIDs.first.flatMap(page.account)
        self.init(
            account: account, serverID: newest, category: category, origin: origin, groupKey: group.groupKey,
            groupCount: group.notificationsCount,
            author: actor.map { NotificationAuthor($0, isFollowed: followed.contains($0.id)) },
            statusID: status?.id, statusHTML: status?.content ?? "", spoilerText: status?.spoilerText ?? "",
            visibility: status?.visibility, conversationID: status?.inReplyToID ?? status?.id)
        oldestMemberID = group.pageMinID
    }

    /// Whether it is a private mention (a mention or reply in a direct status).
    public var isPrivateMention: Bool { category.isMention && visibility == .direct }

    /// Whether the digest's setting "urgent mentions at once" lets it through: a private mention, or a mention
    /// from an account the reader follows.
    public var isUrgentMention: Bool { isPrivateMention || (category.isMention && author?.isFollowed == true) }

    /// The notification request identifier it is raised under: one per group (so a growing group replaces
    /// its notification) or per notification.
    public var requestIdentifier: String {
        if let groupKey { "\(account)#group:\(groupKey)" } else { "\(account)#notification:\(serverID.rawValue)" }
    }
}
