import Testing
import TidingsCore

@testable import TidingsMastodon

/// The scheduler's rules on the virtual clock, through a recording `MastodonPollTarget`.
@Suite(.timeLimit(.minutes(1))) struct MastodonPollSchedulerTests {
    @Test func ticksFollowTheTableAsIdlenessGrowsAndAnInteractionBringsThemBack() async {
        let fixture = await PollingFixture()
        for _ in 0..<28 { await fixture.advance(30) }  // to 840 s
        // Interacting (≤ 2 min idle): 30 s; idle > 2 min: 60 s; idle > 10 min: 120 s.
        let expected: [Double] = [0, 30, 60, 90, 120, 180, 240, 300, 360, 420, 480, 540, 600, 720, 840]
        #expect(await fixture.tickSeconds() == expected)
        await fixture.clock.advance(by: .seconds(10))
        await fixture.scheduler.appStateChanged(.interaction)  // at 850: 30 s after the tick at 840
        await fixture.advance(20)
        #expect(await fixture.tickSeconds().last == 870)
        await fixture.scheduler.shutdown()
    }

    @Test func aTickMakesAtMostThreeRequestsInPriorityOrderAndNotificationsOnlyOnAChange() async {
        let fixture = await PollingFixture()
        await fixture.advance(30)
        await fixture.target.setUnreadCount(3)
        await fixture.advance(30)
        let calls = await fixture.target.calls.map { "\($0.second) \($0.call)" }
        #expect(
            calls == [
                "0.0 unread", "0.0 timeline:home", "0.0 notifications",  // the first count counts as a change
                "30.0 unread", "30.0 timeline:home",  // same count: no notifications
                "60.0 unread", "60.0 timeline:home", "60.0 notifications",
            ])
        await fixture.scheduler.shutdown()
    }

    @Test func theVisibleTimelineIsPolledAndHomeOnlyWithinFiveMinutesOfBeingVisible() async {
        let fixture = await PollingFixture()
        await fixture.clock.advance(by: .seconds(10))
        await fixture.scheduler.appStateChanged(.visibleTimeline(nil))  // a settings screen, at 10 s
        for _ in 0..<12 {
            await fixture.scheduler.appStateChanged(.interaction)
            await fixture.advance(30)
        }
        let homeSeconds = await fixture.target.calls.filter { $0.call == .timeline("home") }.map(\.second)
        #expect(homeSeconds == [0, 30, 60, 90, 120, 150, 180, 210, 240, 270, 300])
        #expect(await fixture.tickSeconds().last == 360, "ticks go on, without Home")
        await fixture.scheduler.appStateChanged(.visibleTimeline("tag:swift"))
        await fixture.advance(30)
        #expect(await fixture.target.names.suffix(2) == ["unread", "timeline:tag:swift"])
        await fixture.scheduler.shutdown()
    }

    @Test func wifiOnlyOnCellularPollsTheCountAndNotificationsButNoTimeline() async {
        let fixture = await PollingFixture(settings: MastodonPollSettings(wifiOnly: true), path: .cellular)
        await fixture.target.setUnreadCount(2)
        await fixture.advance(30)
        #expect(await fixture.target.names == ["unread", "notifications", "unread", "notifications"])
        await fixture.scheduler.appStateChanged(.networkPath(.wifi))
        await fixture.advance(30)
        #expect(await fixture.target.names.suffix(2) == ["unread", "timeline:home"])
        await fixture.scheduler.shutdown()
    }

    @Test func lowPowerDoublesTheInterval() async {
        let fixture = await PollingFixture()
        await fixture.scheduler.appStateChanged(.lowPower(true))
        for _ in 0..<4 {
            await fixture.scheduler.appStateChanged(.interaction)
            await fixture.advance(30)
        }
        #expect(await fixture.tickSeconds() == [0, 60, 120])
        await fixture.scheduler.shutdown()
    }

    @Test func retryAfterIsHonouredToTheSecondByTicksPushWakesAndAppearingTimelines() async throws {
        let fixture = await PollingFixture(prepare: {
            await $0.failNext([MastodonError(.rateLimited, status: 429, retryAfterSeconds: 120)])
        })
        #expect(await fixture.loop.state == .waiting(until: .seconds(120), reason: .scheduled))
        await fixture.clock.advance(by: .seconds(119))
        await fixture.scheduler.pushArrived(account: "a")
        let appeared = Task { try await fixture.scheduler.timelineAppeared("public", account: "a") }
        #expect(await eventually { fixture.clock.pendingSleepers >= 2 })
        await settle(fixture.loop, clock: fixture.clock)
        #expect(await fixture.target.calls.map(\.second) == [0], "nothing before Retry-After ends")
        await fixture.advance(1, ticks: 2)
        #expect(try await appeared.value)
        let after = await fixture.target.calls.dropFirst()
        #expect(!after.isEmpty)
        #expect(after.allSatisfy { $0.second == 120 })
        #expect(after.map(\.call).contains(.timeline("public")))
        await fixture.scheduler.shutdown()
    }

    @Test func aTooManyRequestsWithoutRetryAfterHalvesTheFrequencyForAnHour() async {
        let fixture = await PollingFixture(
            random: { 0 },
            prepare: {
                await $0.failNext([MastodonError(.rateLimited, status: 429)])
            })
        #expect(await fixture.loop.isFrequencyHalved)
        for _ in 0..<61 {
            await fixture.scheduler.appStateChanged(.interaction)
            await fixture.advance(60)
        }  // to 3660 s
        let ticks = await fixture.tickSeconds()
        #expect(ticks.prefix(4) == [0, 60, 120, 180], "every 60 s instead of 30 while halved")
        #expect(ticks.contains(3600))
        #expect(ticks.suffix(2) == [3630, 3660], "full frequency once the hour is over")
        #expect(!(await fixture.loop.isFrequencyHalved))
        await fixture.scheduler.shutdown()
    }

    @Test func failuresBackOffWithFullJitterCappedAtFifteenMinutes() async {
        let fixture = await PollingFixture(
            random: { 0.999_999 }, prepare: { await $0.failAlways(MastodonError.server) })
        for _ in 0..<120 { await fixture.advance(60) }  // two hours
        let ticks = await fixture.tickSeconds()
        let gaps = zip(ticks.dropFirst(), ticks).map { $0 - $1 }
        #expect(gaps.count >= 8)
        #expect(gaps.allSatisfy { $0 <= 900 }, "\(gaps)")
        // The ceiling doubles from 30 s and stops at 15 minutes.
        #expect(gaps[1] > 59 && gaps[2] > 119 && gaps[3] > 239 && gaps[4] > 479)
        #expect(gaps.suffix(3).allSatisfy { $0 > 899 })
        await fixture.scheduler.shutdown()
    }

    @Test func needsReauthenticationStopsPollingUntilTheAccountSignsInAgain() async {
        let authorization = MastodonAuthorization(token: "old")
        let fixture = await PollingFixture(
            authorization: authorization,
            prepare: {
                await $0.failNext([MastodonError(.unauthorized, status: 401)])
            })
        authorization.refuse(token: "old")
        #expect(await fixture.loop.state == .waiting(until: nil, reason: .needsReauthentication))
        await fixture.clock.advance(by: .seconds(3600))
        await fixture.scheduler.pushArrived(account: "a")
        await fixture.scheduler.appStateChanged(.interaction)
        await settle(fixture.loop, clock: fixture.clock)
        #expect(await fixture.target.calls.count == 1)
        #expect(fixture.clock.pendingSleepers == 0, "no timer runs while stopped")
        authorization.signIn(token: "new")
        #expect(await eventually { await fixture.target.calls.count > 1 })
        #expect(await fixture.tickSeconds() == [0, 3600])
        await fixture.scheduler.shutdown()
    }

    @Test func offlineStopsPollingAndThePathUpdateNotATimerResumesIt() async throws {
        let fixture = await PollingFixture()
        await fixture.clock.advance(by: .seconds(5))
        await fixture.scheduler.appStateChanged(.networkPath(.offline))
        #expect(await eventually { await fixture.loop.state == .waiting(until: nil, reason: .offline) })
        #expect(fixture.clock.pendingSleepers == 0, "no timer runs offline")
        await fixture.clock.advance(by: .seconds(7200))
        #expect(await fixture.tickSeconds() == [0])
        #expect(try await fixture.scheduler.timelineAppeared("home", account: "a") == false)
        #expect(await fixture.scheduler.backgroundRefresh().polled.isEmpty)
        await fixture.scheduler.appStateChanged(.networkPath(.wifi))
        #expect(await eventually { await fixture.target.calls.count > 3 })
        #expect(await fixture.tickSeconds() == [0, 7205])
        await fixture.scheduler.shutdown()
    }

    @Test func requestsDuringATickAreCoalescedIntoOneAndAnAppearingTimelineJoinsTheRefreshInFlight() async throws {
        let fixture = await PollingFixture(settled: false, prepare: { await $0.setLatency(.seconds(10)) })
        let clock = fixture.clock
        let target = fixture.target
        /// Waits until `count` calls were made and the latest sleeps on the clock (each takes 10 s).
        func callInFlight(_ count: Int) async -> Bool {
            await eventually { await target.calls.count == count && clock.pendingSleepers == 1 }
        }
        // The first tick: unread 0–10 s, Home 10–20 s, notifications 20–30 s.
        #expect(await callInFlight(1))
        await clock.advance(by: .seconds(12))
        #expect(await callInFlight(2))
        #expect(await target.names == ["unread", "timeline:home"])
        let appeared = Task { try await fixture.scheduler.timelineAppeared("home", account: "a") }
        for _ in 0..<5 { await fixture.scheduler.pushArrived(account: "a") }
        #expect(await eventually { await fixture.scheduler.refreshCallers(account: "a", timeline: "home") == 2 })
        await clock.advance(by: .seconds(8))  // 20 s: Home answered both callers
        #expect(try await appeared.value)
        #expect(await callInFlight(3))
        await clock.advance(by: .seconds(10))  // 30 s: the tick ends; one more for the five requests
        #expect(await callInFlight(4))
        await clock.advance(by: .seconds(10))  // 40 s
        #expect(await callInFlight(5))
        await clock.advance(by: .seconds(10))  // 50 s: the second tick ends (same count: no notifications)
        await settle(fixture.loop, clock: clock, ticks: 2)
        #expect(await fixture.loop.state == .waiting(until: .seconds(60), reason: .scheduled))
        let names = await target.names
        #expect(names.filter { $0 == "timeline:home" }.count == 2, "\(names)")
        #expect(await fixture.tickSeconds() == [0, 30], "five requests in flight → one tick after it")
        await fixture.scheduler.shutdown()
    }

    @Test func cancellingEndsTheLoopPromptlyAndCancelsTheTickInFlight() async {
        let fixture = await PollingFixture(settled: false, prepare: { await $0.setLatency(.seconds(60)) })
        #expect(await eventually { fixture.clock.pendingSleepers == 1 })
        #expect(await fixture.loop.state == .ticking)
        await fixture.scheduler.shutdown()
        #expect(await eventually { await fixture.loop.state == .finished })
        #expect(await fixture.target.cancelled == 1)
        await fixture.clock.advance(by: .seconds(3600))
        #expect(await fixture.target.calls.count == 1)
        #expect(fixture.clock.pendingSleepers == 0)
    }

    @Test func manualPollsOnNoTimerButOnAPushWakeAnAppearingTimelineAndTheBackgroundRefresh() async throws {
        let fixture = await PollingFixture(settings: MastodonPollSettings(preset: .manual))
        #expect(await fixture.loop.state == .waiting(until: nil, reason: .onRequestOnly))
        await fixture.clock.advance(by: .seconds(3600))
        #expect(await fixture.target.calls.isEmpty)
        await fixture.scheduler.pushArrived(account: "a")
        #expect(await eventually { await fixture.target.calls.count == 3 })
        #expect(try await fixture.scheduler.timelineAppeared("public", account: "a"))
        #expect(await fixture.target.names == ["unread", "timeline:home", "notifications", "timeline:public"])
        await fixture.scheduler.appStateChanged(.foreground(false))
        let report = await fixture.scheduler.backgroundRefresh()
        #expect(report.polled == ["a"])
        #expect(await fixture.target.names.suffix(2) == ["notifications", "unread"])
    }
}
