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
        await base.server.post(as: base.bob, "first @alice", mentioning: [base.alice])
        await fixture.sync.pushArrived(account: "alice@sandbox")
        #expect(await eventually { (try? await stored()) == 1 })

        for index in 0..<150 {
            await base.server.post(as: base.bob, "n\(index) @alice", mentioning: [base.alice])
        }
        await fixture.sync.pushArrived(account: "alice@sandbox")
        // Five pages of twenty, then the bound: the rest is left for the next tick.
        #expect(await eventually { (try? await stored()) == 101 })
        #expect(await engine.hasNotificationBacklog)
        #expect(await engine.unreadNotificationCount == 100)

        await fixture.sync.pushArrived(account: "alice@sandbox")
        #expect(await eventually { (try? await stored()) == 151 })
        #expect(await engine.unreadNotificationCount == 100)
        #expect(await engine.hasNotificationBacklog == false)
        let ids = try await engine.notificationGroups().compactMap { $0.group.mostRecentNotificationID }
        #expect(Set(ids).count == 151)
        #expect(ids == ids.sorted(by: >))
        await fixture.sync.shutdown()
    }
}
