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
}
