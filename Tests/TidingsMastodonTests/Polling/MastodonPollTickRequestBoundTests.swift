import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox

/// Seed 002 §3: a tick makes at most 3 requests per account (the unread count, the timeline, notifications), also
/// while the engine catches up a burst larger than a page; what a tick leaves is the next tick's (the backlog).
@Suite(.timeLimit(.minutes(1)))
struct MastodonPollTickRequestBoundTests {
    @Test(arguments: [false, true])
    func aTickMakesAtMostThreeRequestsWhileCatchingUpABurst(shortPages: Bool) async throws {
        var variant = MastodonSandboxVariant.mastodon
        variant.filtersPages = shortPages
        variant.requestsPerWindow = 1_000_000
        let base = try await EngineFixture(variant: variant)
        // The scheduler over the engine itself, without capabilities: no stream makes requests of its own.
        let scheduler = MastodonPollScheduler(
            clock: base.clock, settings: MastodonPollSettings(preset: .manual), random: { 0.5 })
        await scheduler.appStateChanged(.activeAccount("a"))
        await scheduler.appStateChanged(.visibleTimeline(MastodonTimelineKey.homeTimeline))
        await scheduler.addAccount(MastodonPollAccount(key: "a", target: base.engine))
        let loop = try #require(await scheduler.pollLoop(for: "a"))
        await settle(loop, clock: base.clock)
        // A first tick on the quiet server: the cold load; the burst then comes above the cached newest.
        await base.server.post(as: base.bob, "before")
        await scheduler.pushArrived(account: "a")
        await settle(loop, clock: base.clock, ticks: 1)
        for index in 0..<90 { await base.server.post(as: base.bob, "post \(index)") }
        for index in 0..<45 { await base.server.post(as: base.bob, "@alice \(index)", mentioning: [base.alice]) }

        var perTick: [Int] = []
        for _ in 0..<30 {
            let before = base.log.entries.count
            let ticks = await loop.tickCount
            await scheduler.pushArrived(account: "a")
            await settle(loop, clock: base.clock, ticks: ticks + 1)
            perTick.append(base.log.entries.count - before)
        }
        #expect(perTick.allSatisfy { $0 <= 3 }, "requests per tick: \(perTick)")
        #expect(perTick.prefix(3).allSatisfy { $0 == 3 }, "a burst uses the whole bound: \(perTick)")
        // The bound only spreads the work: the ticks caught up with the newest status and notification.
        let reader = MastodonAPIClient(
            server: URL(string: "https://sandbox.invalid")!, accountKey: "check",
            authorization: MastodonAuthorization(token: "alice-token"),
            transport: MastodonSandboxTransport(server: base.http))
        let newestStatus = try await reader.homeTimeline(MastodonPageRange(limit: 1)).items.first?.id
        let entries = try await base.engine.entries()
        #expect(entries.last(where: { !$0.isGap })?.statusID == newestStatus, "\(perTick)")
        #expect(await base.engine.hasNotificationBacklog == false)
        #expect(await base.engine.hasTimelineBacklog(MastodonTimelineKey.homeTimeline) == false)
        #expect(perTick.suffix(3).allSatisfy { $0 <= 2 }, "caught up, a tick is the count and one page: \(perTick)")
        await scheduler.shutdown()
    }
}
