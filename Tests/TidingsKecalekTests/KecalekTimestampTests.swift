import Foundation
import Testing

@testable import TidingsKecalek

/// Parsing, ordering and formatting of the server's timestamps.
@Suite(.timeLimit(.minutes(1))) struct KecalekTimestampTests {
    @Test func timestampsWithAndWithoutFractionAndZoneOrderAsUTC() throws {
        let plain = try #require(KecalekTimestamp("2026-02-15T22:15:45"))
        let zulu = try #require(KecalekTimestamp("2026-02-15T22:15:45Z"))
        let offset = try #require(KecalekTimestamp("2026-02-15T23:15:45+01:00"))
        let fraction = try #require(KecalekTimestamp("2026-02-15T22:15:45.123456"))
        let space = try #require(KecalekTimestamp("2026-02-15 22:15:45.5-0130"))
        #expect(plain == zulu)
        #expect(plain == offset)
        #expect(plain < fraction)
        #expect(fraction.microseconds - plain.microseconds == 123_456)
        #expect(space.microseconds == plain.microseconds + 500_000 + 90 * 60 * 1_000_000)
        #expect(plain.microseconds == 1_771_193_745_000_000)
        #expect(plain.text == "2026-02-15T22:15:45")
    }

    @Test func datesThatDoNotExistAreRejected() {
        for text in ["2026-02-31T00:00:00", "2026-02-29T12:00:00", "2026-04-31T00:00:00", "1900-02-29T00:00:00"] {
            #expect(KecalekTimestamp(text) == nil, "\(text)")
        }
        for text in ["2028-02-29T00:00:00", "2000-02-29T00:00:00", "2026-12-31T23:59:59"] {
            #expect(KecalekTimestamp(text) != nil, "\(text)")
        }
    }

    @Test func oneTickEarlierIsOneUnitOfTheServersResolutionInItsShape() throws {
        let cases: [(String, String)] = [
            ("2026-02-15T22:15:45", "2026-02-15T22:15:44"),
            ("2026-02-15T22:15:45Z", "2026-02-15T22:15:44Z"),
            ("2026-02-15T22:15:45.123", "2026-02-15T22:15:45.122000"),
            ("2026-02-15T22:15:45.120000", "2026-02-15T22:15:45.119999"),
            ("2026-02-15T23:15:45.000+01:00", "2026-02-15T22:15:44.999000Z"),
            ("2026-03-01T00:00:00", "2026-02-28T23:59:59"),
        ]
        for (text, expected) in cases {
            let stamp = try #require(KecalekTimestamp(text))
            #expect(stamp.oneTickEarlier.text == expected, "\(text)")
            #expect(stamp.oneTickEarlier < stamp)
            #expect(KecalekTimestamp(stamp.oneTickEarlier.text) == stamp.oneTickEarlier)
        }
        // At the bottom of the range it saturates instead of trapping.
        #expect(KecalekTimestamp(microseconds: .min).oneTickEarlier.microseconds == .min)
    }

    @Test func malformedTimestampsAreRejected() {
        for text in [
            "", "2026-02-15", "2026-13-01T00:00:00", "2026-02-15T22:15", "2026-02-15T22:15:45.", "x2026-02-15T22:15:45",
            "2026-02-15T22:15:45+1",
        ] {
            #expect(KecalekTimestamp(text) == nil, "\(text)")
        }
    }

    @Test func formattingRoundTripsEveryStyle() throws {
        let micros: Int64 = 1_771_193_745_123_456
        for style in [KecalekTimestamp.Style.seconds, .fractional, .fractionalZulu, .millisecondsWithOffset] {
            let formatted = KecalekTimestamp(microseconds: micros, style: style)
            let parsed = try #require(KecalekTimestamp(formatted.text))
            let expected =
                style == .seconds
                ? micros / 1_000_000 * 1_000_000 : style == .millisecondsWithOffset ? micros / 1000 * 1000 : micros
            #expect(parsed.microseconds == expected, "\(formatted.text)")
        }
        #expect(KecalekTimestamp(microseconds: micros, style: .seconds).text == "2026-02-15T22:15:45")
        #expect(
            KecalekTimestamp(microseconds: micros, style: .millisecondsWithOffset).text
                == "2026-02-15T23:15:45.123+01:00")
    }

    @Test func extremeInstantsFormatAndMoveWithoutTrapping() {
        let last = KecalekTimestamp(microseconds: .max, style: .millisecondsWithOffset)
        #expect(last.microseconds == .max)
        #expect(last.text.hasSuffix("+01:00"))
        #expect(KecalekTimestamp(microseconds: .min).text.hasPrefix("-"))
        let now = KecalekTimestamp(microseconds: 1_771_193_745_123_456)
        #expect(now.adding(.seconds(Int64.max)).microseconds == .max)
        #expect(now.adding(.seconds(Int64.min)).microseconds == .min)
        #expect(now.adding(.milliseconds(1500)).microseconds == 1_771_193_746_623_456)
        #expect(now.adding(.microseconds(-1)).microseconds == 1_771_193_745_123_455)
    }

    @Test func codableKeepsTheServersTextAndRejectsGarbage() throws {
        let original = try #require(KecalekTimestamp("2026-02-15 22:15:45,5+0100"))
        let encoded = try JSONEncoder().encode([original])
        #expect(String(decoding: encoded, as: UTF8.self) == #"["2026-02-15 22:15:45,5+0100"]"#)
        let decoded = try JSONDecoder().decode([KecalekTimestamp].self, from: encoded)
        #expect(decoded == [original])
        #expect(decoded.first?.text == original.text)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([KecalekTimestamp].self, from: Data(#"["yesterday"]"#.utf8))
        }
    }
}
