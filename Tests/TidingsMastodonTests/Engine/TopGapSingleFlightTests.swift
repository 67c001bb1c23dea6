import Foundation
import Testing
import TidingsCore
import TidingsSandbox
import TidingsSandboxKit

@testable import TidingsMastodon

/// Loading the gap on top of a timeline is a refresh (the planner plans it as one), so it joins the timeline's
/// one refresh in flight: a concurrent refresh and top-gap load send one request and apply one page, never the
/// same `min_id` twice on a stale plan.
@Suite(.timeLimit(.minutes(1)))
struct TopGapSingleFlightTests {
    @Test func aTopGapLoadJoinsTheRefreshInFlight() async throws {
        let fixture = try await EngineFixture(pageLimit: 3)
        let engine = fixture.engine
        await fixture.postMany(2, content: "old")
        try await engine.refresh()
        await fixture.postMany(10, content: "new")
        try await engine.refresh()
        let top = try #require(try await engine.entries().last)
        #expect(top.content == .gap(.open), "a full refresh page leaves a gap on top")
        let before = fixture.requests("/api/v1/timelines/home")
        let cachedBefore = try await engine.entries().compactMap(\.statusID).count

        // The sandbox holds its answers on the test clock, so the gap load arrives while the refresh waits.
        fixture.faults.add(.delay(.seconds(1)), on: .path("/api/v1/timelines/home"), times: 2)
        let refresh = Task { try await engine.refresh() }
        await fixture.clock.waitForSleepers(1)
        let gapLoad = Task { try await engine.loadGap(position: top.position) }
        let key = MastodonTimelineKey(account: engine.account, timeline: MastodonTimelineKey.homeTimeline)
        #expect(await eventually { await engine.refresher.waitingCallers(key) == 2 }, "the gap load joins")
        await fixture.clock.advance(by: .seconds(1))
        let refreshed = try await refresh.value
        let loaded = try await gapLoad.value
        #expect(fixture.requests("/api/v1/timelines/home") == before + 1)
        #expect(loaded == refreshed, "both callers get the one page's result")
        let ids = try await engine.entries().compactMap(\.statusID)
        #expect(refreshed.inserted > 0)
        #expect(ids.count == cachedBefore + refreshed.inserted, "one page applied once: \(ids)")
        #expect(Set(ids).count == ids.count)
    }

    @Test func aTopGapLoadAloneIsARefreshThatTheNextRefreshJoins() async throws {
        let fixture = try await EngineFixture(pageLimit: 3)
        let engine = fixture.engine
        await fixture.postMany(2, content: "old")
        try await engine.refresh()
        await fixture.postMany(10, content: "new")
        try await engine.refresh()
        let top = try #require(try await engine.entries().last)
        let before = fixture.requests("/api/v1/timelines/home")
        fixture.faults.add(.delay(.seconds(1)), on: .path("/api/v1/timelines/home"), times: 2)
        let gapLoad = Task { try await engine.loadGap(position: top.position, side: .older) }
        await fixture.clock.waitForSleepers(1)
        let refresh = Task { try await engine.refresh() }
        let key = MastodonTimelineKey(account: engine.account, timeline: MastodonTimelineKey.homeTimeline)
        #expect(await eventually { await engine.refresher.waitingCallers(key) == 2 }, "the refresh joins")
        await fixture.clock.advance(by: .seconds(1))
        _ = try await gapLoad.value
        _ = try await refresh.value
        #expect(fixture.requests("/api/v1/timelines/home") == before + 1)
    }
}
