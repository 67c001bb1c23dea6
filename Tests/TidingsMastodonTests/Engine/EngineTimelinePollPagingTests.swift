import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox
import TidingsSandboxKit

/// A timeline poll catches up with what arrived since the last one, page after page, instead of one page per
/// tick: beside an open stream the scheduler polls every 5 minutes, and one page each left a burst behind an
/// open gap on top for hours (`SyncModelTests`, "sync was not idle" and "is not on top of the cache": seeds
/// 6029319, 6029327, 6029330, 6029383, on servers whose pages come back short while more remain).
@Suite(.timeLimit(.minutes(1)))
struct EngineTimelinePollPagingTests {
    static func shortPages() -> MastodonSandboxVariant {
        var variant = MastodonSandboxVariant.mastodon
        variant.filtersPages = true
        return variant
    }

    @Test func aPollPagesUpwardUntilTheTopIsCached() async throws {
        let fixture = try await EngineFixture(variant: Self.shortPages(), pageLimit: 3)
        await fixture.postMany(2)
        try await fixture.engine.pollTimeline("home")
        let posted = await fixture.postMany(6)
        try await fixture.engine.pollTimeline("home")
        #expect(try await fixture.cachedHome().first == posted.last, "the newest status is cached")
        #expect(try await fixture.engine.entries().last?.isGap == false, "no open gap on top")
        #expect(await fixture.engine.hasTimelineBacklog("home") == false)
    }

    @Test func whatThePageBoundLeavesIsABacklogThatTheNextPollsCatchUp() async throws {
        let fixture = try await EngineFixture(variant: Self.shortPages(), pageLimit: 3)
        await fixture.postMany(2)
        try await fixture.engine.pollTimeline("home")
        let posted = await fixture.postMany(60)
        let before = fixture.requests("/api/v1/timelines/home")
        try await fixture.engine.pollTimeline("home")
        #expect(fixture.requests("/api/v1/timelines/home") - before == MastodonAccountEngine.timelinePagesPerPoll)
        #expect(await fixture.engine.hasTimelineBacklog("home"))
        #expect(try await fixture.cachedHome().first != posted.last, "not caught up yet")
        var polls = 1
        while await fixture.engine.hasTimelineBacklog("home"), polls < 40 {
            try await fixture.engine.pollTimeline("home")
            polls += 1
        }
        #expect(await fixture.engine.hasTimelineBacklog("home") == false)
        #expect(try await fixture.cachedHome().first == posted.last)
        #expect(try await fixture.engine.entries().last?.isGap == false)
    }
}
