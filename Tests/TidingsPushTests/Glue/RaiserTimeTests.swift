import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsPush

/// Quiet hours and the digest over the engine's real notifications, on the virtual clock.
@Suite(.timeLimit(.minutes(1))) struct RaiserTimeTests {
    /// 22:00–07:00 in UTC; the fixture starts at 23:00 UTC.
    static let night = QuietHours(start: (22, 0), end: (7, 0))

    @Test func quietHoursHoldAndTheJobAtTheirEndRaises() async throws {
        let fixture = try await GlueFixture(
            configuration: NotificationRaiserConfiguration(settings: NotificationSettings(quietHours: Self.night)))
        await fixture.server.post(as: fixture.bob, "late @alice", mentioning: [fixture.alice])
        let held = try await fixture.raiser.pollAndRaise()
        #expect(held.map(\.label) == ["hold:quietHours"])
        let jobs = await fixture.raiser.nextJobTimes()
        let end = GlueFixture.epoch.addingTimeInterval(8 * 3600)  // 07:00 the next morning
        #expect(jobs == [end])
        // The badge still updated while quiet.
        #expect(fixture.board.badge == 1)
        await fixture.clock.advance(by: .seconds(8 * 3600))
        let released = try await fixture.raiser.releaseHeld().decisions
        #expect(released.map(\.label) == ["raise"])
        #expect(released.first?.decision.request?.body.text == "late @alice")
    }

    @Test func whatTheMarkerCoveredDuringQuietHoursIsNotRaisedAtTheirEnd() async throws {
        let fixture = try await GlueFixture(
            configuration: NotificationRaiserConfiguration(settings: NotificationSettings(quietHours: Self.night)))
        await fixture.server.post(as: fixture.bob, "late @alice", mentioning: [fixture.alice])
        #expect(try await fixture.raiser.pollAndRaise().map(\.label) == ["hold:quietHours"])
        let id = try #require(try await fixture.engine.notificationGroups().first?.group.mostRecentNotificationID)
        #expect(try await fixture.engine.markRead(.notifications, upTo: id))
        await fixture.clock.advance(by: .seconds(8 * 3600))
        #expect(try await fixture.raiser.releaseHeld().decisions.isEmpty)
    }

    @Test func aContentPushHeldOvernightIsRaisedByTheJobAtTheEndOfQuietHours() async throws {
        let fixture = try await GlueFixture(
            configuration: NotificationRaiserConfiguration(
                settings: NotificationSettings(quietHours: Self.night), mode: .content))
        try await fixture.subscribe()
        await fixture.server.post(as: fixture.bob, "late @alice", mentioning: [fixture.alice])
        let push = try #require(await fixture.receivedPushes(1).first)
        guard case .decided(let held) = try await fixture.raiser.handle(push) else {
            Issue.record("the push was not decided")
            return
        }
        #expect(held.label == "hold:quietHours")
        // Content mode decided from the payload alone: the engine stored nothing to release from.
        #expect(try await fixture.engine.notificationGroups().isEmpty)
        await fixture.clock.advance(by: .seconds(8 * 3600))  // 07:00, the job at the end of quiet hours
        let released = try await fixture.raiser.releaseHeld().decisions
        #expect(released.map(\.label) == ["raise"])
        #expect(released.first?.decision.request?.body.text == "late @alice")
    }

    @Test func theDigestTimeSignalComesAtTheDigestTimeOnlyNotAtTheEndOfQuietHours() async throws {
        var settings = NotificationSettings(delivery: .digest(hours: [8], urgentMentionsAtOnce: false))
        settings.quietHours = Self.night
        let fixture = try await GlueFixture(configuration: NotificationRaiserConfiguration(settings: settings))
        await fixture.server.post(as: fixture.bob, "hi @alice", mentioning: [fixture.alice])
        #expect(try await fixture.raiser.pollAndRaise().map(\.label) == ["hold:quietHours"])
        // The jobs: 07:00 (the end of quiet hours), then 08:00 (the digest).
        let jobs = await fixture.raiser.nextJobTimes()
        #expect(Array(jobs.prefix(2)) == [8, 9].map { GlueFixture.epoch.addingTimeInterval(Double($0) * 3600) })
        let signals = fixture.board.signals.subscribe()
        /// The digest-time signals so far: a fence (the app leaving the foreground) ends the read.
        func digestSignals() async -> Int {
            fixture.board.signals.appLeftForeground()
            var count = 0
            for await reason in signals {
                if reason == .leftForeground { break }
                if reason == .digestTime { count += 1 }
            }
            return count
        }
        await fixture.clock.advance(by: .seconds(8 * 3600))  // 07:00: quiet hours end, no digest yet
        #expect(try await fixture.raiser.releaseHeld().digest == nil)
        #expect(await digestSignals() == 0)
        await fixture.clock.advance(by: .seconds(3600))  // 08:00: the digest
        #expect(try await fixture.raiser.releaseHeld().digest != nil)
        #expect(await digestSignals() == 1)
    }

    @Test func theDigestHoldsAndRaisesOneSummaryAtItsHour() async throws {
        let settings = NotificationSettings(delivery: .digest(hours: [8], urgentMentionsAtOnce: false))
        let fixture = try await GlueFixture(configuration: NotificationRaiserConfiguration(settings: settings))
        // No job ran before: the first hold starts the digest's count, so the app's first 08:00 job delivers.
        let events = fixture.raiser.events()
        let status = await fixture.server.post(as: fixture.alice, "my post")
        try await fixture.favourite(status, by: "bob-token")
        await fixture.server.post(as: fixture.bob, "hi @alice", mentioning: [fixture.alice])
        #expect(try await fixture.raiser.pollAndRaise().map(\.label) == ["hold:digest", "hold:digest"])
        let eight = GlueFixture.epoch.addingTimeInterval(9 * 3600)  // 08:00 the next morning
        #expect(await fixture.raiser.nextJobTimes().first == eight)
        await fixture.clock.advance(by: .seconds(9 * 3600))
        let (returned, after) = try await fixture.raiser.releaseHeld()
        #expect(after.map(\.label) == ["drop:alreadyRaised", "drop:alreadyRaised"])
        // Without a summary no event comes: waiting for one would only end at the time limit.
        try #require(returned != nil)
        var digest: NotificationRequest?
        for await event in events {
            if case .digest(let summary) = event {
                digest = summary
                break
            }
        }
        #expect(returned == digest)
        #expect(digest?.identifier == "\(GlueFixture.account)#digest")
        #expect(digest?.title.text == "2 new notifications")
    }
}
