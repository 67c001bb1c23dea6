import Foundation
import Testing
import TidingsPush

/// `ZoneInfo` (TZif files read without ICU) against Foundation's `TimeZone` (ICU's data on Linux): the same UTC
/// offset for every zone below at instants spread over 1901–2100 and on both sides of every transition, which
/// covers the files' explicit transitions and, after 2037, the footer's POSIX rule.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ZoneInfoFoundationTests {
    /// DST north and south, half- and quarter-hour offsets, a 30-minute DST (Lord Howe), negative DST (Dublin),
    /// DST given up (São Paulo, Tehran), a skipped day (Apia), offset changes outside DST (Moscow, Caracas),
    /// +14 h (Kiritimati), a +2 h DST (Troll), no DST at all (Kolkata, Phoenix), UTC and a fixed Etc zone.
    static let zones = [
        "Europe/Berlin", "Europe/London", "Europe/Dublin", "Europe/Lisbon", "Europe/Moscow", "Atlantic/Azores",
        "America/New_York", "America/Los_Angeles", "America/Phoenix", "America/St_Johns", "America/Sao_Paulo",
        "America/Santiago", "America/Havana", "America/Caracas", "Asia/Kolkata", "Asia/Kathmandu", "Asia/Tehran",
        "Asia/Tokyo", "Asia/Shanghai", "Australia/Sydney", "Australia/Adelaide", "Australia/Lord_Howe",
        "Pacific/Auckland", "Pacific/Chatham", "Pacific/Apia", "Pacific/Kiritimati", "Pacific/Honolulu",
        "Antarctica/Troll", "UTC", "Etc/GMT+5",
    ]

    static let hasZoneData = FileManager.default.fileExists(atPath: ZoneInfo.systemDirectory + "/Europe/Berlin")

    /// Instants from 1901 to 2100: every 9 days and 7 hours (so every hour of the day and weekday comes up).
    static let spread: [Int64] = Array(stride(from: Int64(-2_177_452_800), to: 4_102_444_800, by: 803_220))

    @Test(.enabled(if: hasZoneData), arguments: zones)
    func offsetsMatchFoundation(_ identifier: String) async throws {
        let zone = try ZoneInfo.named(identifier)
        let foundation = try #require(TimeZone(identifier: identifier))
        var mismatches: [String] = []
        func compare(_ instant: Int64) {
            let expected = foundation.secondsFromGMT(for: Date(timeIntervalSince1970: Double(instant)))
            let actual = zone.utcOffset(atUnixTime: instant)
            if expected != actual, mismatches.count < 5 { mismatches.append("\(instant): \(actual) vs \(expected)") }
        }
        // The loops are long in a debug build: yielding now and then leaves the cooperative pool to other suites.
        for (index, instant) in Self.spread.enumerated() {
            compare(instant)
            if index % 512 == 0 { await Task.yield() }
        }
        // Both sides of every transition from 1901 to 2100 (the footer's rule takes over after 2037).
        var cursor: Int64 = -2_177_452_800
        var transitions = 0
        while let next = zone.nextTransition(afterUnixTime: cursor), next < 4_102_444_800 {
            for delta: Int64 in [-3601, -1, 0, 1, 3599] { compare(next + delta) }
            cursor = next
            transitions += 1
            if transitions % 64 == 0 { await Task.yield() }
        }
        // Foundation's DST changes in the footer's years are ones `ZoneInfo` knows too.
        var date = Date(timeIntervalSince1970: 2_208_988_800)  // 2040
        for _ in 0..<20 {
            guard let next = foundation.nextDaylightSavingTimeTransition(after: date),
                next.timeIntervalSince1970 < 4_102_444_800
            else { break }
            let instant = Int64(next.timeIntervalSince1970)
            #expect(zone.nextTransition(afterUnixTime: instant - 1) == instant, "\(identifier) at \(next)")
            date = next
        }
        #expect(mismatches.isEmpty, "\(identifier): \(mismatches)")
        // Every zone but the fixed ones changed its offset at least once since 1901.
        #expect((transitions == 0) == ["UTC", "Etc/GMT+5"].contains(identifier), "\(identifier): \(transitions)")
    }
}
