import Testing
import TidingsCore

@testable import TidingsMastodon

/// The background refresh: notifications for every account, never timelines, pushed accounts only when
/// their last poll is old, and a hard budget that cancels what is in flight.
@Suite(.timeLimit(.minutes(1))) struct MastodonBackgroundRefreshTests {
    @Test func pollsNotificationsOfEveryAccountAndPushedOnesOnlyAfterTenMinutes() async {
        let clock = TestClock()
        let plain = RecordingPollTarget(clock: clock)
        let pushed = RecordingPollTarget(clock: clock)
        let scheduler = MastodonPollScheduler(clock: clock)
        await scheduler.appStateChanged(.foreground(false))
        await scheduler.addAccount(MastodonPollAccount(key: "plain", target: plain))
        await scheduler.addAccount(MastodonPollAccount(key: "pushed", target: pushed, push: .active))
        await clock.advance(by: .seconds(3600))
        #expect(await plain.calls.isEmpty, "the background has no timer")

        let first = await scheduler.backgroundRefresh()
        #expect(first.polled == ["plain", "pushed"], "never polled: a pushed account is polled too")
        #expect(await plain.names == ["notifications", "unread"])
        #expect(await pushed.names == ["notifications", "unread"])

        await clock.advance(by: .seconds(600))
        let second = await scheduler.backgroundRefresh()
        #expect(second.polled == ["plain"])
        #expect(second.skipped == ["pushed"], "polled 10 minutes ago")
        await clock.advance(by: .seconds(1))
        #expect(await scheduler.backgroundRefresh().polled == ["plain", "pushed"])
        #expect(await (plain.names + pushed.names).allSatisfy { !$0.hasPrefix("timeline") })
        await scheduler.shutdown()
    }

    @Test func theBudgetCancelsWorkInFlightAndReportsIt() async {
        let clock = TestClock()
        let quick = RecordingPollTarget(clock: clock)
        let slow = RecordingPollTarget(clock: clock)
        await quick.setLatency(.seconds(5))
        await slow.setLatency(.seconds(60))
        let scheduler = MastodonPollScheduler(clock: clock)
        await scheduler.appStateChanged(.foreground(false))
        await scheduler.addAccount(MastodonPollAccount(key: "quick", target: quick))
        await scheduler.addAccount(MastodonPollAccount(key: "slow", target: slow))
        let run = Task { await scheduler.backgroundRefresh() }
        #expect(await eventually { clock.pendingSleepers == 3 })  // the budget and two requests
        await clock.advance(by: .seconds(25))
        let report = await run.value
        #expect(report.polled == ["quick"])
        #expect(report.cutShort == ["slow"])
        #expect(await slow.cancelled == 1)
        #expect(clock.now.offset == .seconds(25), "it ended when the budget did")
        #expect(clock.pendingSleepers == 0)
        await scheduler.shutdown()
    }
}
