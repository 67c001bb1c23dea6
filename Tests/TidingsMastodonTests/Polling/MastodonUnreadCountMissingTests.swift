import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox

/// A server without the unread-count endpoint (Nextcloud Social: 404 for v1 and v2) is still polled: the
/// scheduler asks for the count once, remembers it is missing, and polls notifications with `min_id` every tick
/// instead, within the 3-requests-per-tick rule; refreshed capabilities make it ask again.
@Suite(.timeLimit(.minutes(1)))
struct MastodonUnreadCountMissingTests {
    private static let alice = "alice@sandbox"

    /// The requests the sandbox answered for exactly `path` (any query).
    private static func requests(_ fixture: MastodonSyncTests.Fixture, _ path: String) -> Int {
        fixture.base.log.entries.filter { $0.path == path }.count
    }

    @Test func nextcloudSocialIsPolledWithoutAnUnreadCount() async throws {
        let fixture = try await MastodonSyncTests.Fixture(variant: .nextcloud, preset: .normal)
        let sync = fixture.sync
        let clock = fixture.base.clock
        await sync.appStateChanged(.activeAccount(Self.alice))
        await sync.appStateChanged(.visibleTimeline(MastodonTimelineKey.homeTimeline))
        let engine = await fixture.add("alice-token", Self.alice)
        let loop = try #require(await sync.scheduler.pollLoop(for: Self.alice))
        let outcomes = LockedState([PollTickOutcome]())
        let events = loop.events()
        let collector = Task {
            for await event in events {
                if case .tickFinished(_, let outcome) = event { outcomes.withLock { $0.append(outcome) } }
            }
        }
        let before = fixture.base.log.entries.count
        await fixture.base.server.post(as: fixture.base.bob, "hi @alice", mentioning: [fixture.base.alice])

        // Ten virtual minutes on the table (30 s, then 60 s and 120 s as alice goes idle).
        await PollLoopDriver.run([loop], clock: clock, until: clock.now.advanced(by: .seconds(600)))
        let ticks = await loop.tickCount
        #expect(ticks >= 5)
        // Every tick succeeded (before the fix each one failed on the count and went no further).
        #expect(await eventually { outcomes.withLock { $0.count } == ticks })
        #expect(outcomes.withLock { $0 }.allSatisfy { $0 == .success })
        collector.cancel()
        #expect(try await engine.notifications().count == 1)
        #expect(try await engine.entries().contains { $0.statusID != nil })
        // Asked once (v1 only on this server), then never again.
        #expect(Self.requests(fixture, "/api/v1/notifications/unread_count") == 1)
        #expect(Self.requests(fixture, "/api/v2/notifications/unread_count") == 0)
        // Notifications every tick, with min_id once one is stored; never more than 3 requests a tick.
        #expect(Self.requests(fixture, "/api/v1/notifications") == ticks)
        #expect(fixture.base.log.entries.count - before <= 3 * ticks)

        // A notification that arrives later is stored by the next tick, though no count announced it.
        await fixture.base.server.post(as: fixture.base.bob, "again @alice", mentioning: [fixture.base.alice])
        await PollLoopDriver.run([loop], clock: clock, until: clock.now.advanced(by: .seconds(150)))
        #expect(try await engine.notifications().count == 2)

        // The server changes (capabilities differ): the count is asked for again, and used where it answers.
        await fixture.base.server.setVariant(.mastodon)
        _ = try await sync.refreshCapabilities(account: Self.alice)
        // One tick now (a push wake), whatever the stream that opened did to the schedule.
        await sync.pushArrived(account: Self.alice)
        #expect(await eventually { Self.requests(fixture, "/api/v2/notifications/unread_count") == 1 })
        await sync.shutdown()
    }

    @Test func theBackgroundRefreshOfAServerWithoutUnreadCountPolls() async throws {
        let fixture = try await MastodonSyncTests.Fixture(variant: .nextcloud, preset: .normal)
        let sync = fixture.sync
        await sync.appStateChanged(.foreground(false))
        let engine = await fixture.add("alice-token", Self.alice)
        await fixture.base.server.post(as: fixture.base.bob, "hi @alice", mentioning: [fixture.base.alice])
        let first = await sync.backgroundRefresh()
        #expect(first.polled == [Self.alice])
        #expect(try await engine.notifications().count == 1)
        // The count was missing once (v1 only): the next refresh does not ask for it.
        let second = await sync.backgroundRefresh()
        #expect(second.polled == [Self.alice])
        #expect(Self.requests(fixture, "/api/v1/notifications/unread_count") == 1)
        await sync.shutdown()
    }
}
