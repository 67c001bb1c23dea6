import Foundation
import Testing

@testable import TidingsCore

/// Server-supplied delays are bounded, read in the unit the server meant, and measured on the
/// server's own clock when it sent one.
@Suite(.timeLimit(.minutes(1))) struct RateBudgetServerDelayTests {
    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }

    static func iso8601(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }

    @Test func hugeRetryAfterIsClampedToTheMaximum() async {
        let fixture = BudgetFixture()
        await fixture.budget.record(RateLimitSignal(statusCode: 429, retryAfter: "999999999"), host: "h")
        #expect(await fixture.budget.status(host: "h").blockedFor == .seconds(3600))

        let strict = BudgetFixture(.init(maximumServerDelay: .seconds(600)))
        await strict.budget.record(RateLimitSignal(statusCode: 429, retryAfter: "86400"), host: "h")
        #expect(await strict.budget.status(host: "h").blockedFor == .seconds(600))
        let date = Self.httpDate(strict.wallNow.addingTimeInterval(7 * 86400))
        await strict.budget.record(RateLimitSignal(statusCode: 503, retryAfter: date), host: "other")
        #expect(await strict.budget.status(host: "other").blockedFor == .seconds(600))
    }

    @Test func farFutureResetIsClampedToTheMaximum() async throws {
        let fixture = BudgetFixture()
        await fixture.budget.record(
            RateLimitSignal(statusCode: 200, limit: "300", remaining: "0", reset: "2099-01-01T00:00:00Z"), host: "h")
        #expect(await fixture.budget.status(host: "h").blockedFor == .seconds(3600))
        let times = fixture.acquisitionTimes(1, host: "h")
        #expect(try await fixture.clock.run(until: times) == [.seconds(3600)])
    }

    @Test func millisecondResetIsReadAsMilliseconds() async throws {
        let fixture = BudgetFixture()
        let resetMilliseconds = Int64((fixture.wallNow.timeIntervalSince1970 + 45.5) * 1000)
        await fixture.budget.record(
            RateLimitSignal(statusCode: 200, remaining: "0", reset: String(resetMilliseconds)), host: "h")
        #expect(await fixture.budget.status(host: "h").blockedFor == .milliseconds(45_500))
        let times = fixture.acquisitionTimes(1, host: "h")
        #expect(try await fixture.clock.run(until: times) == [.milliseconds(45_500)])
    }

    @Test func epochSecondsAndDeltaSecondsResetsAreToldApart() async {
        let fixture = BudgetFixture()
        let epochSeconds = Int64(fixture.wallNow.timeIntervalSince1970) + 90
        await fixture.budget.record(
            RateLimitSignal(statusCode: 200, remaining: "0", reset: "\(epochSeconds)"), host: "a")
        #expect(await fixture.budget.status(host: "a").blockedFor == .seconds(90))
        await fixture.budget.record(RateLimitSignal(statusCode: 200, remaining: "0", reset: "30"), host: "b")
        #expect(await fixture.budget.status(host: "b").blockedFor == .seconds(30))
    }

    @Test func resetInThePastDoesNotBlock() async throws {
        let fixture = BudgetFixture()
        let past = fixture.wallNow.addingTimeInterval(-600)
        let pastMilliseconds = String(Int64(past.timeIntervalSince1970 * 1000))
        for (host, reset) in [("iso", Self.iso8601(past)), ("ms", pastMilliseconds)] {
            await fixture.budget.record(RateLimitSignal(statusCode: 200, remaining: "0", reset: reset), host: host)
            #expect(await fixture.budget.status(host: host).blockedFor == .zero, "\(host)")
            // The server's window is over, so one request may go at once to learn the new count.
            let times = fixture.acquisitionTimes(1, host: host)
            #expect(try await fixture.clock.run(until: times) == [.zero], "\(host)")
        }
    }

    @Test func retryAfterDateIsMeasuredOnTheServersClock() async {
        let fixture = BudgetFixture()
        // The server's clock runs a day ahead of ours.
        let serverNow = fixture.wallNow.addingTimeInterval(86400)
        let retryAt = Self.httpDate(serverNow.addingTimeInterval(60))
        await fixture.budget.record(
            RateLimitSignal(statusCode: 429, retryAfter: retryAt, date: Self.httpDate(serverNow)), host: "dated")
        #expect(await fixture.budget.status(host: "dated").blockedFor == .seconds(60))
        // Without a Date header the local clock is all there is, and the maximum bounds the damage.
        await fixture.budget.record(RateLimitSignal(statusCode: 429, retryAfter: retryAt), host: "undated")
        #expect(await fixture.budget.status(host: "undated").blockedFor == .seconds(3600))
        // An unreadable Date header falls back to the local clock as well.
        await fixture.budget.record(
            RateLimitSignal(statusCode: 429, retryAfter: retryAt, date: "yesterday"), host: "garbled")
        #expect(await fixture.budget.status(host: "garbled").blockedFor == .seconds(3600))
    }

    @Test func resetTimestampIsMeasuredOnTheServersClock() async {
        let fixture = BudgetFixture()
        let serverNow = fixture.wallNow.addingTimeInterval(-86400)
        let reset = Self.iso8601(serverNow.addingTimeInterval(30))
        await fixture.budget.record(
            RateLimitSignal(statusCode: 200, remaining: "0", reset: reset, date: Self.httpDate(serverNow)), host: "h")
        #expect(await fixture.budget.status(host: "h").blockedFor == .seconds(30))
    }

    @Test func resetParsingRules() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(RateLimitReset.delay("2027-01-15T08:00:30Z", now: Date(timeIntervalSince1970: 1_800_000_000)) != nil)
        #expect(RateLimitReset.delay("1800000030", now: now) == .seconds(30))
        #expect(RateLimitReset.delay("1800000030000", now: now) == .seconds(30))
        #expect(RateLimitReset.delay("1800000030.5", now: now) == .milliseconds(30_500))
        #expect(RateLimitReset.delay("45", now: now) == .seconds(45))
        #expect(RateLimitReset.delay("0", now: now) == .zero)
        #expect(RateLimitReset.delay("1700000000", now: now) == .zero, "epoch seconds in the past")
        #expect(RateLimitReset.delay(String(repeating: "9", count: 400), now: now).map { $0 > .seconds(1e9) } == true)
        for bad in ["", "-5", "soon", "0x10", "1e3", "nan", "inf", "١٢"] {
            #expect(RateLimitReset.delay(bad, now: now) == nil, "\(bad)")
        }
    }
}
