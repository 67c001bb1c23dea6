import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox
import TidingsSandboxKit

/// Notifications, unread counts and the unread flag, driven through `MastodonPollTarget` as the scheduler does.
@Suite(.timeLimit(.minutes(1)))
struct EngineNotificationTests {
    @Test func groupedNotificationsAreStoredByGroupKeyAndPolledFromTheNewest() async throws {
        let fixture = try await EngineFixture()
        let target: any MastodonPollTarget = fixture.engine
        let own = await fixture.server.post(as: fixture.alice, "mine")
        await fixture.server.post(as: fixture.bob, "hi @alice", mentioning: [fixture.alice])
        let carol = await fixture.server.addAccount(username: "carol", token: "carol-token")
        let bobClient = MastodonAPIClient(
            server: URL(string: "https://sandbox.invalid")!, accountKey: "bob",
            authorization: MastodonAuthorization(token: "bob-token"),
            transport: MastodonSandboxTransport(server: fixture.http))
        let carolClient = MastodonAPIClient(
            server: URL(string: "https://sandbox.invalid")!, accountKey: "carol",
            authorization: MastodonAuthorization(token: "carol-token"),
            transport: MastodonSandboxTransport(server: fixture.http))
        _ = try await bobClient.perform(.favourite, status: ServerID(own))
        _ = try await carolClient.perform(.favourite, status: ServerID(own))
        _ = carol

        try await target.pollNotifications()
        let groups = try await fixture.engine.notificationGroups()
        // follow (alice → bob makes no notification for alice), one mention, one group of two favourites.
        #expect(groups.count == 2)
        #expect(groups.first { $0.group.type == .favourite }?.group.notificationsCount == 2)
        // The page, then the one above it, which the server answers empty with no newer `Link`: the top.
        #expect(fixture.requests("/api/v2/notifications") == 2)
        #expect(fixture.requests("/api/v1/notifications") == 0)

        // A second poll asks only for what is newer, and a repeat stores nothing twice.
        try await target.pollNotifications()
        #expect(try await fixture.engine.notificationGroups().count == 2)
        await fixture.server.post(as: fixture.bob, "again @alice", mentioning: [fixture.alice])
        try await target.pollNotifications()
        #expect(try await fixture.engine.notificationGroups().count == 3)
    }

    @Test(arguments: ["pleroma", "nextcloud"])
    func serversWithoutVersion2GetVersion1NotificationsAndCounts(_ name: String) async throws {
        let fixture = try await EngineFixture(variant: name == "pleroma" ? .pleroma : .nextcloud)
        let target: any MastodonPollTarget = fixture.engine
        await fixture.server.post(as: fixture.bob, "hi @alice", mentioning: [fixture.alice])
        await fixture.server.post(as: fixture.bob, "hi again @alice", mentioning: [fixture.alice])
        if name == "nextcloud" {
            // Nextcloud Social has no unread count (the scheduler then polls notifications every tick).
            await #expect(throws: MastodonError.notFound) { try await target.pollUnreadCount() }
        } else {
            #expect(try await target.pollUnreadCount() == 2)
        }
        try await target.pollNotifications()
        try await target.pollNotifications()
        #expect(try await fixture.engine.notifications().count == 2)
        #expect(fixture.requests("/api/v2/notifications") == 0)
        #expect(await fixture.engine.hasUnread)
    }

    @Test func withoutCapabilitiesA404OnVersion2MovesTheNextPollToVersion1() async throws {
        let fixture = try await EngineFixture(variant: .pleroma, knowCapabilities: false)
        await fixture.server.post(as: fixture.bob, "hi @alice", mentioning: [fixture.alice])
        await #expect(throws: MastodonError.notFound) { try await fixture.engine.pollUnreadCount() }
        #expect(try await fixture.engine.pollUnreadCount() == 1)
        await #expect(throws: MastodonError.notFound) { try await fixture.engine.pollNotifications() }
        try await fixture.engine.pollNotifications()
        #expect(try await fixture.engine.notifications().count == 1)
    }

    @Test func theUnreadFlagFollowsTheCountAndTheNotificationsMarker() async throws {
        let fixture = try await EngineFixture()
        var changes = fixture.engine.changes().makeAsyncIterator()
        #expect(try await fixture.engine.pollUnreadCount() == 0)
        #expect(await fixture.engine.hasUnread == false)
        await fixture.server.post(as: fixture.bob, "hi @alice", mentioning: [fixture.alice])
        #expect(try await fixture.engine.pollUnreadCount() == 1)
        #expect(await fixture.engine.hasUnread)
        #expect(await changes.next() == .unread(count: 0, flag: false))
        #expect(await changes.next() == .unread(count: 1, flag: true))
        try await fixture.engine.pollNotifications()
        let newest = try #require(try await fixture.engine.notificationGroups().first?.group.mostRecentNotificationID)
        // Reading the notifications and posting the marker clears the server's count and the flag.
        try await fixture.engine.markRead(.notifications, upTo: newest)
        try await fixture.engine.enterBackground()
        #expect(try await fixture.engine.pollUnreadCount() == 0)
        #expect(await fixture.engine.hasUnread == false)
    }

    @Test func aServerErrorWhilePollingStoresNothing() async throws {
        let fixture = try await EngineFixture()
        await fixture.server.post(as: fixture.bob, "hi @alice", mentioning: [fixture.alice])
        fixture.faults.add(.status(503), on: .path("/api/v2/notifications"), times: 1)
        await #expect(throws: MastodonError.server) { try await fixture.engine.pollNotifications() }
        #expect(try await fixture.engine.notificationGroups().isEmpty)
        try await fixture.engine.pollNotifications()
        #expect(try await fixture.engine.notificationGroups().count == 1)
    }
}
