import Foundation
import Testing

@testable import TidingsCore

@Suite(.timeLimit(.minutes(1))) struct RateBudgetHeaderParsingTests {
    /// 2015-10-21 07:28:00 UTC, the date of RFC 9110's Retry-After example.
    let exampleDate = Date(timeIntervalSince1970: 1_445_412_480)

    @Test func retryAfterDeltaSeconds() {
        let now = Date(timeIntervalSince1970: 0)
        #expect(RetryAfter.parse("120", now: now) == .seconds(120))
        #expect(RetryAfter.parse(" 0 ", now: now) == .zero)
        #expect(RetryAfter.parse("99999999999999999999999999", now: now).map { $0 > .seconds(1e9) } == true)
        #expect(RetryAfter.parse(String(repeating: "9", count: 400), now: now).map { $0 > .seconds(1e9) } == true)
        for bad in ["", "-5", "1.5", "soon", "12s", "0x10", "١٢"] {
            #expect(RetryAfter.parse(bad, now: now) == nil, "\(bad)")
        }
    }

    @Test func retryAfterHTTPDatesInAllThreeForms() {
        let now = exampleDate.addingTimeInterval(-90)
        for text in ["Wed, 21 Oct 2015 07:28:00 GMT", "Wednesday, 21-Oct-15 07:28:00 GMT", "Wed Oct 21 07:28:00 2015"] {
            #expect(RetryAfter.parse(text, now: now) == .seconds(90), "\(text)")
        }
        // A date already passed means "now".
        #expect(RetryAfter.parse("Wed, 21 Oct 2015 07:28:00 GMT", now: exampleDate.addingTimeInterval(5)) == .zero)
        #expect(RetryAfter.parse("Wed, 32 Oct 2015 07:28:00 GMT", now: now) == nil)
    }

    @Test func resetTimestampsISO8601AndUnix() {
        let expected = Date(timeIntervalSince1970: 1_497_389_700)  // 2017-06-13T21:35:00Z
        #expect(HTTPDate.parseTimestamp("2017-06-13T21:35:00Z") == expected)
        #expect(HTTPDate.parseTimestamp("2017-06-13T23:35:00+02:00") == expected)
        let fractional = HTTPDate.parseTimestamp("2017-06-13T21:35:00.123Z")
        #expect(fractional.map { abs($0.timeIntervalSince(expected) - 0.123) < 0.001 } == true)
        #expect(HTTPDate.parseTimestamp("1497389700") == expected)
        for bad in ["", "tomorrow", "2017-13-45T99:00:00Z", "-1"] {
            #expect(HTTPDate.parseTimestamp(bad) == nil, "\(bad)")
        }
    }

    @Test func signalReadsHeadersCaseInsensitively() {
        let signal = RateLimitSignal(
            statusCode: 429,
            headers: [
                "retry-after": "30", "X-RATELIMIT-LIMIT": "300", "X-RateLimit-Remaining": "0",
                "x-ratelimit-reset": "2017-06-13T21:35:00Z", "Content-Type": "application/json",
            ])
        #expect(
            signal
                == RateLimitSignal(
                    statusCode: 429, retryAfter: "30", limit: "300", remaining: "0", reset: "2017-06-13T21:35:00Z"))
    }
}
