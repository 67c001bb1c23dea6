import Foundation
import TidingsCore

/// Notifications (v2 grouped, falling back to v1), the unread count and the unread flag: the polling
/// scheduler's side of the engine (``MastodonPollTarget``).
extension MastodonAccountEngine {
    /// The last unread notifications count the server gave, or nil before the first poll.
    public var unreadNotificationCount: Int? { unread?.count }

    /// The account's unread flag (the sidebar dot): unread notifications on the server, or notifications
    /// stored past the notifications marker.
    public var hasUnread: Bool { unread?.flag ?? false }

    /// `GET /api/v2/notifications/unread_count`, or the v1 one where v2 is missing (remembered after a 404);
    /// one request.
    ///
    /// - Throws: ``MastodonError``.
    public func pollUnreadCount() async throws -> Int {
        let count: Int
        if version1UnreadCount || capabilitiesCache.map({ !$0.supportsGroupedNotifications }) == true {
            count = try await guarded { try await self.client.unreadCount(version1: true) }
        } else {
            do {
                count = try await guarded { try await self.client.unreadCount() }
            } catch let error as MastodonError where error == .notFound {
                // The next poll asks v1; this one has spent its request.
                version1UnreadCount = true
                throw error
            }
        }
        try updateUnread(count: count)
        return count
    }

    /// Records the server's count and recomputes the flag; tells subscribers when either changed.
    func updateUnread(count: Int?) throws {
        let count = count ?? unread?.count ?? 0
        let marker = try localMarker(.notifications)
        let newest = try readNow { db in try self.store.newestNotificationID(account: self.account, in: db) }
        let storedUnread = newest.map { newest in marker.map { newest > $0 } ?? true } ?? false
        let next = (count: count, flag: count > 0 || storedUnread)
        if unread?.count != next.count || unread?.flag != next.flag {
            unread = next
            broadcaster.publish(.unread(count: next.count, flag: next.flag))
        }
    }

    /// Refreshes the home timeline, or the visible one; see ``refresh(_:)``.
    public func pollTimeline(_ timeline: String) async throws {
        try await refresh(timeline)
    }

    /// How many `min_id` pages one ``pollNotifications()`` reads at most before it leaves the rest to the
    /// next tick (``hasNotificationBacklog``).
    public static let notificationPagesPerPoll = 5

    /// Whether the last ``pollNotifications()`` stopped with newer notifications left on the server (its last
    /// page was full at the page bound, or the rate budget refused a further page): the scheduler then polls
    /// notifications at the next tick even when the unread count (which Mastodon caps) did not move.
    public var hasNotificationBacklog: Bool { notificationsBacklogged }

    /// Fetches the notifications newer than the newest stored (`min_id`; the newest page when none is) and
    /// stores them: v2 grouped by `group_key` where the server has it, v1 otherwise. A full page (as many
    /// notifications as the effective limit) means newer ones remain, so it pages upward from the newest
    /// stored, up to ``notificationPagesPerPoll`` requests; what is still left sets ``hasNotificationBacklog``.
    /// A rate limit on a page after the first ends the poll with what was stored (backlog set), not an error.
    ///
    /// - Throws: ``MastodonError`` of the first page, or a store error.
    public func pollNotifications() async throws {
        let limit = min(pageLimit, serverCap.withLock { $0 } ?? pageLimit)
        var added = 0
        var full = true
        var pages = 0
        defer { if added > 0 { broadcaster.publish(.notifications(added: added)) } }
        while full, pages < Self.notificationPagesPerPoll {
            do {
                (added, full) = try await pollNotificationsPage(limit: limit, added: added)
            } catch let error as MastodonError where error == .rateLimited && pages > 0 {
                break
            }
            pages += 1
        }
        notificationsBacklogged = full
        try updateUnread(count: nil)
    }

    /// One `min_id` page above the newest stored notification: the running count of stored rows, and whether
    /// the page was full (newer ones may remain).
    private func pollNotificationsPage(limit: Int, added: Int) async throws -> (added: Int, full: Bool) {
        let newest = try readNow { db in try self.store.newestNotificationID(account: self.account, in: db) }
        let range = MastodonPageRange(minID: newest, limit: pageLimit)
        if version1Notifications || capabilitiesCache.map({ !$0.supportsGroupedNotifications }) == true {
            let page = try await guarded { try await self.client.notifications(range) }
            var rows: [MastodonStoredNotification] = []
            for notification in page.items {
                rows.append(
                    MastodonStoredNotification(
                        id: notification.id, statusID: notification.status?.id,
                        payload: try JSONEncoder().encode(notification)))
            }
            let stored = try writeNow { db in
                try self.store.storeNotifications(rows, account: self.account, in: db)
            }
            return (added + stored, page.items.count + page.skipped >= limit && !rows.isEmpty)
        }
        let results: MastodonGroupedNotifications
        do {
            results = try await guarded { try await self.client.groupedNotifications(range).results }
        } catch let error as MastodonError where error == .notFound {
            version1Notifications = true
            throw error
        }
        var rows: [MastodonStoredNotificationGroup] = []
        // Mastodon limits groups; a server grouping one page of notifications limits their sum.
        var members = 0
        for group in results.notificationGroups {
            members += max(1, group.notificationsCount)
            guard let recent = group.mostRecentNotificationID ?? group.pageMaxID else { continue }
            let payload = MastodonGroupPayload(
                group: group, accounts: group.sampleAccountIDs.compactMap { results.account($0) },
                status: group.statusID.flatMap { results.status($0) })
            rows.append(
                MastodonStoredNotificationGroup(
                    groupKey: group.groupKey, mostRecentID: recent, payload: try JSONEncoder().encode(payload)))
        }
        let stored = try writeNow { db in
            try self.store.storeNotificationGroups(rows, account: self.account, in: db)
        }
        let full = results.notificationGroups.count >= limit || members >= limit
        return (added + stored, full && !rows.isEmpty)
    }

    /// The stored v1 notifications, newest first.
    public func notifications() throws -> [MastodonNotification] {
        try readNow { db in try self.store.notifications(account: self.account, in: db) }.map {
            try MastodonWire.decode(MastodonNotification.self, from: $0.payload)
        }
    }

    /// The stored grouped notifications, newest first.
    public func notificationGroups() throws -> [MastodonGroupPayload] {
        try readNow { db in try self.store.notificationGroups(account: self.account, in: db) }.map {
            try MastodonWire.decode(MastodonGroupPayload.self, from: $0.payload)
        }
    }
}

/// A stored grouped notification: the group with the accounts and the status it refers to.
public struct MastodonGroupPayload: Codable, Sendable, Hashable {
    /// The group as the server sent it.
    public var group: MastodonNotificationGroup
    /// The sample accounts the page carried for it.
    public var accounts: [MastodonAccount]
    /// The status it is about, when the page carried it.
    public var status: MastodonStatus?

    /// A stored group.
    public init(group: MastodonNotificationGroup, accounts: [MastodonAccount], status: MastodonStatus?) {
        self.group = group
        self.accounts = accounts
        self.status = status
    }
}
