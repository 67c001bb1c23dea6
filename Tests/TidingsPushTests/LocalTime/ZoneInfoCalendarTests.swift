import Foundation
import Testing
import TidingsPush

/// `NotificationCalendar` on a ``ZoneInfo`` zone (offset arithmetic, no ICU) gives the same minute of the day,
/// next wall-clock time, quiet end and digest times as on Foundation's `TimeZone` (a Gregorian `Calendar`), on
/// both sides of DST changes north and south, in half-hour zones and in a zone that skipped a day.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ZoneInfoCalendarTests {
    static let zones = [
        "Europe/Berlin", "America/New_York", "America/St_Johns", "America/Santiago", "America/Havana",
        "Australia/Lord_Howe", "Australia/Adelaide", "Pacific/Chatham", "Pacific/Apia", "Asia/Kolkata",
        "Europe/Dublin", "Europe/Moscow",
    ]

    /// Minutes of the day quiet hours and digests use, including the hours DST changes skip or repeat.
    static let minutes = [0, 30, 59, 60, 90, 120, 121, 150, 180, 210, 480, 1320, 1410, 1439]

    /// Instants around four offset changes from 2010 and four from 2038 (the footer's years), six hours either
    /// side, and a spread over the 40 days after each start.
    static func instants(_ zone: ZoneInfo) -> [Int64] {
        var result: [Int64] = []
        for start: Int64 in [1_262_304_000, 2_145_916_800] {
            var cursor = start
            for _ in 0..<4 {
                guard let next = zone.nextTransition(afterUnixTime: cursor) else { break }
                result += stride(from: next - 6 * 3600, through: next + 6 * 3600, by: 1980).map { $0 }
                result += [next - 1, next, next + 1]
                cursor = next
            }
            result += stride(from: start, to: start + 40 * 86_400, by: 97_337).map { $0 }
        }
        return result
    }

    /// The earliest instant after `date` that answers "next `minute` of the day" by brute force, from the offsets
    /// alone (which `ZoneInfoFoundationTests` holds against Foundation): minute by minute for three days, an
    /// instant whose local time is that minute, or the end of a gap that skipped it.
    static func bruteForce(after date: Date, minute: Int, _ zone: ZoneInfo) -> Int64? {
        let start = Int64((date.timeIntervalSince1970 / 60).rounded(.down)) * 60 + 60
        for instant in stride(from: start, to: start + 3 * 86_400, by: 60) {
            let before = Int64(zone.utcOffset(atUnixTime: instant - 1))
            let after = Int64(zone.utcOffset(atUnixTime: instant))
            let local = instant + after
            let day = (local - ((local % 86_400) + 86_400) % 86_400)
            if local - day == Int64(minute) * 60 { return instant }
            // A gap at `instant` skipped the local times from `instant + before` up to `instant + after`.
            if before < after {
                for wanted in [day - 86_400, day].map({ $0 + Int64(minute) * 60 })
                where wanted >= instant + before && wanted < local {
                    return instant
                }
            }
        }
        return nil
    }

    /// Where the two calendars differ, the ICU-free answer must be the brute-force one. Foundation's
    /// `nextDate(…, matchingPolicy: .nextTime, repeatedTimePolicy: .first)` on Linux differs around changes that do
    /// not fall on a whole hour or are not an hour long: the next day's time for a 30-minute repeat (Lord Howe) or a
    /// reading after a gap (Chatham), a later hour than asked (St John's changes at 00:01 before 2011, Chatham), the
    /// same minute on the next day for a skipped whole day (Apia, 30 December 2011) where the promise is the end of
    /// the gap. Returns nil when the ICU-free answer is right, else the mismatch.
    static func difference(_ rules: Date, _ foundation: Date, after date: Date, minute: Int, _ zone: ZoneInfo)
        -> String?
    {
        guard rules != foundation else { return nil }
        let expected = bruteForce(after: date, minute: minute, zone)
        return expected == Int64(rules.timeIntervalSince1970)
            ? nil : "\(rules) vs \(foundation), brute force \(expected.map(String.init) ?? "none")"
    }

    @Test(.enabled(if: ZoneInfoFoundationTests.hasZoneData), arguments: zones)
    func bothBackendsAgree(_ identifier: String) async throws {
        let info = try ZoneInfo.named(identifier)
        let rules = NotificationCalendar(zone: .zoneInfo(info))
        let foundation = NotificationCalendar(timeZone: try #require(TimeZone(identifier: identifier)))
        var mismatches: [String] = []
        func record(_ what: String, _ problem: String?) {
            if let problem, mismatches.count < 8 { mismatches.append("\(what): \(problem)") }
        }
        let night = QuietHours(start: (22, 0), end: (3, 0))
        let digest = NotificationSettings(
            quietHours: night, delivery: .digest(hours: [2, 8, 22], urgentMentionsAtOnce: false))
        for instant in Self.instants(info) {
            await Task.yield()  // each instant is many Foundation calls: leave the cooperative pool to other suites
            let date = Date(timeIntervalSince1970: Double(instant) + 0.25)
            let minute = rules.minuteOfDay(date)
            record("minute \(date)", minute == foundation.minuteOfDay(date) ? nil : "\(minute)")
            var foundationDiffers = false
            for wanted in Self.minutes {
                let mine = rules.next(minuteOfDay: wanted, after: date)
                let theirs = foundation.next(minuteOfDay: wanted, after: date)
                if mine != theirs { foundationDiffers = true }
                record(
                    "next \(wanted) after \(date)", Self.difference(mine, theirs, after: date, minute: wanted, info))
            }
            let quietEnd = rules.quietEnd(at: date, night)
            record(
                "quiet end \(date)",
                Self.difference(
                    quietEnd, foundation.quietEnd(at: date, night), after: date, minute: night.endMinute, info))
            let mine = rules.digestTimes(after: date, settings: digest)
            let theirs = foundation.digestTimes(after: date, settings: digest)
            // Digest times build on `next`; they may differ only where `next` did.
            if mine != theirs, !foundationDiffers { record("digest \(date)", "\(mine) vs \(theirs)") }
        }
        #expect(mismatches.isEmpty, "\(identifier): \(mismatches)")
    }

    @Test func aChangeOfZoneIsTheNextDecisionsZone() throws {
        // The same instant: 23:30 in Berlin (quiet), 17:30 in New York (not); a context's zone is read per decision.
        guard ZoneInfoFoundationTests.hasZoneData else { return }
        let now = Date(timeIntervalSince1970: 1_781_127_000)  // 2026-06-10T21:30:00Z
        let settings = NotificationSettings(quietHours: QuietHours(start: (22, 0), end: (7, 0)))
        var context = NotificationPolicyContext(now: now, zone: .zoneInfo(try .named("Europe/Berlin")), marker: nil)
        let candidate = NotificationCandidate(account: "a@b.example", serverID: "7", category: .mention, origin: .push)
        let berlin = NotificationPolicy.decide(candidate, settings: settings, context: context, raised: .none)
        guard case .hold(let until, .quietHours) = berlin else {
            Issue.record("Berlin: \(berlin)")
            return
        }
        #expect(until == Date(timeIntervalSince1970: 1_781_154_000))  // 2026-06-11T05:00:00Z = 07:00 in Berlin
        context.zone = .zoneInfo(try .named("America/New_York"))
        guard case .raise = NotificationPolicy.decide(candidate, settings: settings, context: context, raised: .none)
        else {
            Issue.record("New York did not raise")
            return
        }
    }
}
