import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox
import TidingsSandboxKit

/// The background refresh's budget cuts a real engine's multi-page notifications poll short: the pages stored
/// before the cut stay, the engine says a backlog remains, and the next poll goes on from there.
@Suite(.timeLimit(.minutes(1)))
struct MastodonSyncBackgroundCutShortTests {
    private static let alice = "alice@sandbox"
    private static let notifications = "/api/v2/notifications"

    @Test func aCutShortPollKeepsItsFirstPageAndLeavesABacklog() async throws {
        let fixture = try await MastodonSyncTests.Fixture()
        let base = fixture.base
        let sync = fixture.sync
        let engine = await sync.addAccount(
            client: fixture.client("alice-token", Self.alice), store: base.store, pageLimit: 40)
        @Sendable func stored() async -> Int { (try? await engine.notificationGroups().count) ?? -1 }
        await base.server.post(as: base.bob, "first @alice", mentioning: [base.alice])
        try await engine.pollNotifications()
        #expect(await stored() == 1)
        for index in 0..<130 { await base.server.post(as: base.bob, "n\(index) @alice", mentioning: [base.alice]) }
        await sync.appStateChanged(.foreground(false))

        // The first page answers after 1 s, the second after a minute: longer than the 10 s budget.
        base.faults.add(.delay(.seconds(1)), on: .path(Self.notifications), times: 1)
        base.faults.add(.delay(.seconds(60)), on: .path(Self.notifications), times: 1)
        let run = Task { await sync.backgroundRefresh(budget: .seconds(10)) }
        #expect(await eventually { base.clock.pendingSleepers == 2 })  // the budget and the first page
        await base.clock.advance(by: .seconds(1))
        #expect(await eventually { await stored() == 41 })
        #expect(await eventually { base.clock.pendingSleepers == 2 })  // the budget and the second page
        await base.clock.advance(by: .seconds(9))
        let report = await run.value
        #expect(report.cutShort == [Self.alice])
        #expect(await stored() == 41, "the first page stays")
        #expect(await engine.hasNotificationBacklog, "what the cut left is a backlog")

        try await engine.pollNotifications()
        #expect(await stored() == 131)
        #expect(await engine.hasNotificationBacklog == false)
        let ids = try await engine.notificationGroups().compactMap { $0.group.mostRecentNotificationID }
        #expect(Set(ids).count == 131)
        await sync.shutdown()
    }
}
