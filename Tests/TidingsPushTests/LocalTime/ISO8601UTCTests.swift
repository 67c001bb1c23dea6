import Foundation
import Testing
import TidingsPush

/// `ISO8601UTC` writes what `Date.formatted(.iso8601)` writes (the CLI prints hold times with it, without ICU).
@Suite(.timeLimit(.minutes(1))) struct ISO8601UTCTests {
    @Test func matchesFoundationsISO8601Style() {
        for seconds in stride(from: -2_208_988_800.0, to: 4_102_444_800, by: 7_776_017.75) + [0, -0.5, 59.999] {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(ISO8601UTC.string(from: date) == date.formatted(.iso8601), "\(seconds)")
        }
        #expect(ISO8601UTC.string(from: Date(timeIntervalSince1970: 1_796_194_800)) == "2026-12-02T07:00:00Z")
    }
}
