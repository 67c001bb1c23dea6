import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox
import TidingsSandboxKit

/// The scheduler polls notifications again while the engine reports a backlog, although the capped unread
/// count did not move.
@Suite(.timeLimit(.minutes(1)))
struct MastodonSyncNotificationBacklogTests {
    @Test func aBacklogIsPolledAtTheNextTickWithTheCountUnchanged() async throws {
        let fixture = try await MastodonSyncTests.Fixture()
        let base = fixture.base
        let engine = await fixture.sync.addAccount(
            client: fixture.client("alice-token", "alice@sandbox"), store: base.store, pageLimit: 20)
        @Sendable func stored() async throws -> Int { try await engine.notificationGroups().count }
        let loop = try #require(await fixture.sync.scheduler.pollLoop(for: "alice@sandbox"))
        // One tick, run to its end: counting store changes instead let the next push land inside a tick still
        // reading its second page, which then ran once more (a flaky tick count under load).
        @Sendable func tick() async -> Bool {
            let before = await loop.tickCount
            await fixture.sync.pushArrived(account: "alice@sandbox")
            return await eventually {
                let state = await loop.state
                return await loop.tickCount > before && state != .ticking
            }
        }
        await base.server.post(as: base.bob, "first @alice", mentioning: [base.alice])
        #expect(await tick())
        #expect(try await stored() == 1)

        for index in 0..<150 {
            await base.server.post(as: base.bob, "n\(index) @alice", mentioning: [base.alice])
        }
        // A tick makes 3 requests at most: the count and two pages of twenty; the rest is left for the next.
        #expect(await tick())
        #expect(try await stored() == 41)
        #expect(await engine.hasNotificationBacklog)
        #expect(await engine.unreadNotificationCount == 100)

        // The capped count does not move; the backlog alone brings the next ticks until the top is reached.
        var ticks = 1
        while await engine.hasNotificationBacklog, ticks < 10 {
            let before = try await stored()
            #expect(await tick())
            let now = try await stored()
            let backlog = await engine.hasNotificationBacklog
            #expect(now > before || !backlog)
            ticks += 1
        }
        #expect(try await stored() == 151)
        #expect(ticks == 5, "150 in pages of 20 and the empty page above them, two pages a tick")
        #expect(await engine.unreadNotificationCount == 100)
        #expect(await engine.hasNotificationBacklog == false)
        let ids = try await engine.notificationGroups().compactMap { $0.group.mostRecentNotificationID }
        #expect(Set(ids).count == 151)
        #expect(ids == ids.sorted(by: >))
        await fixture.sync.shutdown()
    }
}
