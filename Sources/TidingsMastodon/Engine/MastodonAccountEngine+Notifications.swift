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

    /// Refreshes the home timeline, or the visible one (see ``refresh(_:)``), and goes on upward until a page
    /// brings nothing new and does not say newer statuses remain (a full page leaves the open gap on top; a
    /// `Link` cursor moved past rows the server did not show), up to ``timelinePagesPerPoll`` requests; what is
    /// still left sets ``hasTimelineBacklog(_:)``. A rate limit on a page after the first ends the poll with what
    /// was stored. Nothing new: one request; something new: one more, which shows the top is reached.
    ///
    /// Why: the user stream brings only what is posted while it is open, and beside it the scheduler polls every
    /// 5 minutes; one page per poll left a burst (or a stretch offline) behind an open gap on top for hours. And
    /// a page that inserted statuses is not proven to be the top even when it looks short: a server that drops
    /// rows after paging (filters) from the middle of a page leaves its `Link` cursors and the count looking
    /// like the end while newer rows remain; only the next page, empty of anything new, shows the top.
    public func pollTimeline(_ timeline: String) async throws {
        let bound = MastodonTickPageBudget.pages ?? Self.timelinePagesPerPoll
        try await refreshUpward(timeline, maximumPages: bound)
    }

    /// How many refresh pages one ``pollTimeline(_:)`` reads at most before it leaves the rest to the next tick
    /// (``hasTimelineBacklog(_:)``).
    public static let timelinePagesPerPoll = 5

    /// Whether the last ``pollTimeline(_:)`` of `timeline` stopped with newer statuses left on the server (the
    /// page bound, a rate limit or a failure ended it while pages still said so): the scheduler then polls on
    /// the adaptive table rather than the stream's 5-minute safety net until it is caught up.
    public func hasTimelineBacklog(_ timeline: String) -> Bool { timelineBacklog.contains(timeline) }

    /// How many `min_id` pages one ``pollNotifications()`` reads at most before it leaves the rest to the
    /// next tick (``hasNotificationBacklog``).
    public static let notificationPagesPerPoll = 5

    /// Whether the last ``pollNotifications()`` stopped with newer notifications left on the server (the page
    /// bound ended it while the server still linked a newer page, or the rate budget refused a further page):
    /// the scheduler then polls notifications at the next tick even when the unread count (which Mastodon caps)
    /// did not move.
    public var hasNotificationBacklog: Bool { notificationsBacklogged }

    /// Fetches the notifications newer than the newest stored (`min_id`; the newest page when none is) and
    /// stores them: v2 grouped by `group_key` where the server has it, v1 otherwise. It pages upward along the
    /// `Link` header's `prev` cursor until the server links no newer page, up to ``notificationPagesPerPoll``
    /// requests; what is still left sets ``hasNotificationBacklog``. A rate limit on a page after the first ends
    /// the poll with what was stored (backlog set), not an error; any other failure or a cancellation after the
    /// first page keeps what was stored, sets the backlog and is thrown.
    ///
    /// Why `Link` and not the count: servers filter after paging, so a `min_id` page comes back shorter than the
    /// limit while newer notifications remain; Mastodon sends `prev` on every page that paged over something, and
    /// none on the empty page above the newest. Only a server that sends no `Link` at all is paged by the count.
    ///
    /// - Throws: ``MastodonError`` of the first page, or a store error.
    public func pollNotifications() async throws {
        var added = 0
        var cursor: ServerID?
        var newerRemain = true
        var pages = 0
        defer { if added > 0 { broadcaster.publish(.notifications(added: added)) } }
        let bound = MastodonTickPageBudget.pages ?? Self.notificationPagesPerPoll
        while newerRemain, pages < bound {
            do {
                let page = try await pollNotificationsPage(after: cursor)
                added += page.stored
                cursor = page.newer
            } catch let error as MastodonError where error == .rateLimited && pages > 0 {
                break
            } catch {
                // Cut short after a page (the background refresh's budget cancelled it, a failure): the pages
                // stored stay, and what the server still links is a backlog for the next poll.
                if pages > 0 { notificationsBacklogged = true }
                throw error
            }
            pages += 1
            newerRemain = cursor != nil
        }
        notificationsBacklogged = newerRemain
        try updateUnread(count: nil)
    }

    /// One `min_id` page above `cursor` (above the newest stored notification when nil): how many rows it
    /// stored, and the `min_id` of the newer page when the server says there is one.
    private func pollNotificationsPage(after cursor: ServerID?) async throws -> (stored: Int, newer: ServerID?) {
        let limit = min(pageLimit, serverCap.withLock { $0 } ?? pageLimit)
        let minID = try cursor ?? readNow { db in try self.store.newestNotificationID(account: self.account, in: db) }
        let range = MastodonPageRange(minID: minID, limit: pageLimit)
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
            let newer = Self.newerNotificationPage(
                asked: minID, linked: page.older != nil || page.newer != nil, prev: page.newer?.minID,
                newestShown: rows.map(\.id).max(), full: page.items.count + page.skipped >= limit)
            return (stored, newer)
        }
        let answer: (results: MastodonGroupedNotifications, older: MastodonPageRange?, newer: MastodonPageRange?)
        do {
            answer = try await guarded { try await self.client.groupedNotifications(range) }
        } catch let error as MastodonError where error == .notFound {
            version1Notifications = true
            throw error
        }
        let results = answer.results
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
        let newer = Self.newerNotificationPage(
            asked: minID, linked: answer.older != nil || answer.newer != nil, prev: answer.newer?.minID,
            newestShown: rows.map(\.mostRecentID).max(),
            full: results.notificationGroups.count >= limit || members >= limit)
        return (stored, newer)
    }

    /// Where the next `min_id` page starts, or nil at the top. With a `Link` header its `prev` cursor decides
    /// (a cursor that does not move past what was asked ends the poll rather than asking the same page again);
    /// without one, only a full page means newer ones remain, above the newest shown.
    static func newerNotificationPage(
        asked: ServerID?, linked: Bool, prev: ServerID?, newestShown: ServerID?, full: Bool
    ) -> ServerID? {
        if linked {
            guard let prev, asked.map({ prev > $0 }) ?? true else { return nil }
            return prev
        }
        return full ? newestShown : nil
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
