import Foundation
import Testing
import TidingsCore
import TidingsPush

/// `NotificationSettings.usesLocalTime` lets `tidings push decrypt --store` skip `TimeZone.current` (ICU's zone
/// data, part of issue 12's P2): these tests pin that the flag is on exactly when a rule reads the local time, and
/// that a decision under settings without it is the same in every time zone.
@Suite(.timeLimit(.minutes(1))) struct PolicyLocalTimeTests {
    typealias S = PolicyTestSupport

    @Test func onlyQuietHoursAndDigestsUseLocalTime() {
        #expect(!NotificationSettings().usesLocalTime)
        #expect(!NotificationSettings(enabledCategories: [.mention]).usesLocalTime)
        #expect(NotificationSettings(quietHours: QuietHours(start: (22, 0), end: (7, 0))).usesLocalTime)
        #expect(NotificationSettings(delivery: .digest(hours: [8], urgentMentionsAtOnce: true)).usesLocalTime)
        // A digest without a valid hour is not a digest (`isDigest`), so it reads no time either.
        #expect(!NotificationSettings(delivery: .digest(hours: [], urgentMentionsAtOnce: false)).usesLocalTime)
    }

    @Test func withoutLocalTimeTheDecisionIsTheSameInEveryTimeZone() {
        let zones = [S.berlin, S.newYork, TimeZone.gmt, TimeZone(secondsFromGMT: 13 * 3600)!]
        // Midnight, the small hours and a DST change in Berlin: times a quiet window or digest would care about.
        let times = [S.date(2026, 6, 10, 23, 30), S.date(2026, 6, 11, 3), S.date(2026, 3, 29, 2, 30)]
        for settings in [NotificationSettings(), NotificationSettings(enabledCategories: [.favourite])] {
            #expect(!settings.usesLocalTime)
            for now in times {
                let decisions = zones.map { zone in
                    NotificationPolicy.decide(
                        S.candidate("7"), settings: settings, context: S.context(now, zone: zone), raised: .none)
                }
                #expect(Set(decisions.map(\.label)).count == 1)
                #expect(decisions.allSatisfy { $0 == decisions[0] })
            }
        }
    }

    @Test func withQuietHoursTheZoneStillDecides() {
        // 23:30 in Berlin is 17:30 in New York: quiet in one, not in the other.
        let settings = NotificationSettings(quietHours: QuietHours(start: (22, 0), end: (7, 0)))
        let now = S.date(2026, 6, 10, 23, 30)
        let berlin = NotificationPolicy.decide(
            S.candidate("7"), settings: settings, context: S.context(now, zone: S.berlin), raised: .none)
        let newYork = NotificationPolicy.decide(
            S.candidate("7"), settings: settings, context: S.context(now, zone: S.newYork), raised: .none)
        #expect(berlin.label == "hold.quietHours")
        #expect(newYork.label == "raise")
    }
}
