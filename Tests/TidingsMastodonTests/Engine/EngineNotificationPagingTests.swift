import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox
import TidingsSandboxKit

/// More new notifications than one page between two polls: none may be skipped while the (capped) unread
/// count stays the same.
@Suite(.timeLimit(.minutes(1)))
struct EngineNotificationPagingTests {
    private static func mention(_ fixture: EngineFixture, count: Int) async {
        for index in 0..<count {
            await fixture.server.post(as: fixture.bob, "n\(index) @alice", mentioning: [fixture.alice])
        }
    }

    @Test(arguments: ["mastodon", "pleroma"])
    func aHundredAndThirtyNewNotificationsAreAllStoredInOnePoll(_ name: String) async throws {
        let fixture = try await EngineFixture(variant: name == "mastodon" ? .mastodon : .pleroma)
        await Self.mention(fixture, count: 1)
        try await fixture.engine.pollNotifications()
        #expect(try await fixture.engine.pollUnreadCount() == 1)
        await Self.mention(fixture, count: 130)
        try await fixture.engine.pollNotifications()
        let ids: [ServerID]
        if name == "mastodon" {
            ids = try await fixture.engine.notificationGroups().compactMap { $0.group.mostRecentNotificationID }
        } else {
            ids = try await fixture.engine.notifications().map(\.id)
        }
        #expect(ids.count == 131)
        #expect(Set(ids).count == 131)
        #expect(ids == ids.sorted(by: >))
        #expect(await fixture.engine.hasNotificationBacklog == false)
    }

    @Test func whatThePageBoundLeavesIsMarkedAndReadByTheNextPoll() async throws {
        let fixture = try await EngineFixture(pageLimit: 20)
        await Self.mention(fixture, count: 130)
        try await fixture.engine.pollNotifications()
        // The first poll without a cursor reads the newest page, then pages upward: nothing newer remains.
        #expect(await fixture.engine.hasNotificationBacklog == false)
        #expect(try await fixture.engine.pollUnreadCount() == 100)
        await Self.mention(fixture, count: 130)
        try await fixture.engine.pollNotifications()
        #expect(try await fixture.engine.notificationGroups().count == 120)
        #expect(await fixture.engine.hasNotificationBacklog)
        #expect(try await fixture.engine.pollUnreadCount() == 100)
        try await fixture.engine.pollNotifications()
        let ids = try await fixture.engine.notificationGroups().compactMap { $0.group.mostRecentNotificationID }
        #expect(ids.count == 150)
        #expect(Set(ids).count == 150)
        #expect(ids == ids.sorted(by: >))
        #expect(await fixture.engine.hasNotificationBacklog == false)
    }

    /// Found by `SyncModelTests` (seeds 6029321, 6029331, 6029374, 6029379): a server that filters after paging
    /// answers a `min_id` page shorter than the limit while newer notifications remain, and the poll took it for
    /// the end (it counted). Only the `Link` header tells: the poll follows `prev` until the server has no newer
    /// page.
    @Test(arguments: ["mastodon", "pleroma"])
    func aShortPageIsNotTheEndWhileTheServerLinksANewerOne(_ name: String) async throws {
        var variant: MastodonSandboxVariant = name == "mastodon" ? .mastodon : .pleroma
        variant.filtersPages = true
        let fixture = try await EngineFixture(variant: variant, pageLimit: 3)
        await Self.mention(fixture, count: 1)
        try await fixture.engine.pollNotifications()
        await Self.mention(fixture, count: 7)
        let before = fixture.requests("/api/")
        try await fixture.engine.pollNotifications()
        let spent = fixture.requests("/api/") - before
        // The newest is on top of every page that reaches it, so the server never drops it from a page.
        let check = MastodonAPIClient(
            server: URL(string: "https://sandbox.invalid")!, accountKey: "alice-check",
            authorization: MastodonAuthorization(token: "alice-token"),
            transport: MastodonSandboxTransport(server: fixture.http))
        let newest: ServerID?
        let stored: [ServerID]
        if name == "mastodon" {
            newest = try await check.groupedNotifications(MastodonPageRange(limit: 1)).results
                .notificationGroups.first?.mostRecentNotificationID
            stored = try await fixture.engine.notificationGroups().compactMap { $0.group.mostRecentNotificationID }
        } else {
            newest = try await check.notifications(MastodonPageRange(limit: 1)).items.first?.id
            stored = try await fixture.engine.notifications().map(\.id)
        }
        let top = try #require(newest)
        #expect(stored.first == top, "the newest notification is stored: \(stored)")
        #expect(await fixture.engine.hasNotificationBacklog == false)
        // Seven new at three a page, then the page above the newest: four requests, within the bound.
        #expect(spent == 4)
    }
}
