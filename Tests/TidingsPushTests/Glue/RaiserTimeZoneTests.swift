import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsPush

/// The raiser reads the device's time zone at each decision: quiet hours and the jobs move with the person.
@Suite(.timeLimit(.minutes(1))) struct RaiserTimeZoneTests {
    @Test func theDefaultIsTheDevicesZoneReadWithoutICU() {
        let zone = NotificationRaiserConfiguration().zone.current()
        #expect(zone == NotificationTimeZone.current())
        #if os(Linux)
            // The TZif reading: a Foundation zone would load ICU's data (P2).
            guard case .zoneInfo = zone else {
                Issue.record("the device's zone is a Foundation zone on Linux: \(zone)")
                return
            }
        #endif
    }

    @Test func aChangeOfTheDevicesZoneMovesTheHoldAndTheJobs() async throws {
        let device = LockedState(NotificationTimeZone.zoneInfo(.utc))
        let fixture = try await GlueFixture(
            configuration: NotificationRaiserConfiguration(
                settings: NotificationSettings(quietHours: RaiserTimeTests.night)),
            zone: NotificationZoneSource { device.withLock { $0 } })
        await fixture.server.post(as: fixture.bob, "late @alice", mentioning: [fixture.alice])
        // 23:00 UTC: quiet until 07:00 UTC.
        let sevenUTC = GlueFixture.epoch.addingTimeInterval(8 * 3600)
        #expect(try await fixture.raiser.pollAndRaise().map(\.held) == [sevenUTC])
        #expect(await fixture.raiser.nextJobTimes() == [sevenUTC])
        // The person flies to Berlin (UTC+1 in December): 00:00 there, quiet until 07:00 Berlin = 06:00 UTC.
        device.withLock { $0 = .zoneInfo(try! ZoneInfo.named("Europe/Berlin")) }
        let sixUTC = GlueFixture.epoch.addingTimeInterval(7 * 3600)
        #expect(await fixture.raiser.nextJobTimes() == [sixUTC])
        await fixture.server.post(as: fixture.carol, "still up @alice?", mentioning: [fixture.alice])
        #expect(try await fixture.raiser.pollAndRaise().map(\.held) == [sixUTC, sixUTC])
        // An hour later in New York (UTC−5): 19:00 there, outside the window: the job raises both.
        await fixture.clock.advance(by: .seconds(3600))
        device.withLock { $0 = .zoneInfo(try! ZoneInfo.named("America/New_York")) }
        let released = try await fixture.raiser.releaseHeld().decisions
        #expect(released.map(\.label) == ["raise", "raise"])
        // Next: the end of the coming night in New York, 07:00 there = 12:00 UTC.
        #expect(await fixture.raiser.nextJobTimes() == [GlueFixture.epoch.addingTimeInterval(13 * 3600)])
    }
}

extension AccountNotificationDecision {
    /// When a hold ends; nil for any other decision.
    fileprivate var held: Date? {
        if case .hold(let until, _) = decision { return until }
        return nil
    }
}
