import Foundation
import Testing
import TidingsCore

@testable import TidingsMastodon

/// A visible timeline the engine cannot fetch (a list deleted on the server, a kind it does not know) fails
/// only that timeline: the unread count and the notifications of the tick still run, and polling keeps its
/// cadence instead of backing off.
@Suite(.timeLimit(.minutes(1)))
struct MastodonPollTimelineFailureTests {
    @Test(arguments: [MastodonError.unsupported, .notFound, .badRequest, .decoding])
    func aTimelineThatCannotBeFetchedFailsOnlyItself(_ error: MastodonError) async {
        let fixture = await PollingFixture(
            visible: "list:gone",
            prepare: { target in
                await target.failTimelines(error)
            })
        #expect(await fixture.target.names == ["unread", "timeline:list:gone", "notifications"])
        #expect(await fixture.scheduler.timelineFailure(account: "a")?.timeline == "list:gone")
        await fixture.advance(30)
        #expect(await fixture.tickSeconds() == [0, 30], "the table's 30 s, no backoff")
    }

    @Test func aServerErrorOnTheTimelineStillLetsNotificationsGo() async {
        let fixture = await PollingFixture(
            visible: "tag:swift",
            prepare: { target in
                await target.failTimelines(MastodonError(.server, status: 503))
            })
        #expect(await fixture.target.names == ["unread", "timeline:tag:swift", "notifications"])
        #expect(await fixture.scheduler.timelineFailure(account: "a") == nil, "not the timeline's own failure")
    }

    @Test func aRateLimitOnTheTimelineStillPausesTheTick() async {
        let fixture = await PollingFixture(
            visible: "list:busy",
            prepare: { target in
                await target.failTimelines(MastodonError.rateLimited)
            })
        #expect(await fixture.target.names == ["unread", "timeline:list:busy"])
    }

    @Test func aTimelineThatWorksAgainClearsItsFailure() async {
        let fixture = await PollingFixture(
            visible: "tag:swift",
            prepare: { target in
                await target.failTimelines(MastodonError.notFound)
            })
        #expect(await fixture.scheduler.timelineFailure(account: "a") != nil)
        await fixture.target.failTimelines(nil as (any Error)?)
        await fixture.advance(30)
        #expect(await fixture.scheduler.timelineFailure(account: "a") == nil)
    }
}
