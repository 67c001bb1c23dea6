import Foundation
import Testing

@testable import TidingsCore

/// A budget on a virtual clock whose wall clock is derived from the same virtual time.
struct BudgetFixture {
    static let epoch = Date(timeIntervalSince1970: 1_800_000_000)
    let clock = TestClock()
    let budget: RateBudget

    init(_ configuration: RateBudget.Configuration = .mastodon, random: @escaping @Sendable () -> Double = { 0.5 }) {
        let clock = self.clock
        budget = RateBudget(
            configuration: configuration, clock: clock,
            wallClock: { BudgetFixture.epoch.addingTimeInterval(clock.now.offset.inSeconds) }, random: random)
    }

    var wallNow: Date { Self.epoch.addingTimeInterval(clock.now.offset.inSeconds) }

    /// Starts `count` sequential acquisitions and returns a task yielding the virtual time of each.
    func acquisitionTimes(_ count: Int, host: String = "mastodon.example") -> Task<[Duration], any Error> {
        Task {
            var times: [Duration] = []
            for _ in 0..<count {
                try await budget.acquire(host: host)
                times.append(clock.now.offset)
            }
            return times
        }
    }

    /// Whether one acquisition is still waiting after the clock has had the chance to run it.
    func pendingAcquire(host: String = "mastodon.example") async -> (Task<Void, any Error>, Bool) {
        let finished = Flag()
        let task = Task {
            try await budget.acquire(host: host)
            await finished.set()
        }
        await clock.advance()
        _ = await clock.waitForSleepers(1, maxYields: 1000)
        return (task, await !finished.value)
    }
}

actor Flag {
    private(set) var value = false
    func set() { value = true }
}

@Suite(.timeLimit(.minutes(1))) struct RateBudgetTests {
    @Test func fullBucketBurstsThenRefillsOnePerSecond() async throws {
        let fixture = BudgetFixture()
        for _ in 0..<300 { try await fixture.budget.acquire(host: "mastodon.example") }
        #expect(fixture.clock.now.offset == .zero, "300 requests go at once")
        let times = fixture.acquisitionTimes(3)
        #expect(await fixture.clock.waitForSleepers(1))
        await fixture.clock.advance(by: .milliseconds(999))
        #expect(fixture.clock.pendingSleepers == 1)
        let timesResult = try await fixture.clock.run(until: times)
        #expect(timesResult == [.seconds(1), .seconds(2), .seconds(3)])
    }

    @Test func retryAfterSecondsBlocksEveryRequestUntilItPasses() async throws {
        let fixture = BudgetFixture()
        await fixture.budget.record(RateLimitSignal(statusCode: 429, retryAfter: "120"), host: "mastodon.example")
        let status = await fixture.budget.status(host: "mastodon.example")
        #expect(status.blockedFor == .seconds(120))
        #expect(status.halvedFor == .zero, "a 429 with Retry-After is obeyed, not penalised")
        let times = fixture.acquisitionTimes(2)
        #expect(await fixture.clock.waitForSleepers(1))
        await fixture.clock.advance(by: .milliseconds(119_999))
        #expect(fixture.clock.pendingSleepers == 1)
        // The block lifts into one token, not a burst: the next request waits a refill.
        #expect(try await fixture.clock.run(until: times) == [.seconds(120), .seconds(121)])
    }

    @Test func retryAfterHTTPDateIsHonoured() async throws {
        let fixture = BudgetFixture()
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let date = formatter.string(from: fixture.wallNow.addingTimeInterval(90))
        await fixture.budget.record(RateLimitSignal(statusCode: 503, retryAfter: date), host: "mastodon.example")
        let times = fixture.acquisitionTimes(1)
        let timesResult = try await fixture.clock.run(until: times)
        #expect(timesResult == [.seconds(90)])
    }

    @Test func remainingZeroWaitsUntilReset() async throws {
        let fixture = BudgetFixture()
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let reset = formatter.string(from: fixture.wallNow.addingTimeInterval(45.5))
        await fixture.budget.record(
            RateLimitSignal(statusCode: 200, limit: "300", remaining: "0", reset: reset), host: "mastodon.example")
        let times = fixture.acquisitionTimes(1)
        let timesResult = try await fixture.clock.run(until: times)
        #expect(timesResult == [.milliseconds(45_500)])
    }

    @Test func lowRemainingCountCapsTheBucket() async throws {
        let fixture = BudgetFixture()
        await fixture.budget.record(
            RateLimitSignal(statusCode: 200, remaining: "2", reset: "2099-01-01T00:00:00Z"), host: "mastodon.example")
        let times = fixture.acquisitionTimes(3)
        let timesResult = try await fixture.clock.run(until: times)
        #expect(timesResult == [.zero, .zero, .seconds(1)])
    }

    @Test func tooManyRequestsWithoutRetryAfterBacksOffAndHalvesTheRateForAnHour() async throws {
        let fixture = BudgetFixture()
        await fixture.budget.record(RateLimitSignal(statusCode: 429), host: "mastodon.example")
        let status = await fixture.budget.status(host: "mastodon.example")
        // Backoff base 5 s with the injected jitter 0.5: 2.5 s.
        #expect(status.blockedFor == .milliseconds(2500))
        #expect(status.halvedFor == .seconds(3600))
        let halved = fixture.acquisitionTimes(4)
        let halvedResult = try await fixture.clock.run(until: halved)
        // The first request when the 2.5 s backoff lifts, then half rate: one token per 2 s.
        #expect(
            halvedResult == [
                .milliseconds(2500), .milliseconds(4500), .milliseconds(6500), .milliseconds(8500),
            ])

        // After the hour, the full rate returns: a full bucket, then one per second.
        await fixture.clock.advance(to: .init(offset: .seconds(3600 + 9)))
        #expect(await fixture.budget.status(host: "mastodon.example").halvedFor == .zero)
        for _ in 0..<300 { try await fixture.budget.acquire(host: "mastodon.example") }
        let start = fixture.clock.now.offset
        let restored = fixture.acquisitionTimes(2)
        let restoredResult = try await fixture.clock.run(until: restored)
        #expect(restoredResult == [start + .seconds(1), start + .seconds(2)])
    }

    @Test func repeated429sGrowTheBackoffAndSuccessResetsIt() async throws {
        let fixture = BudgetFixture(random: { 0.999_999 })
        var blocked: [Duration] = []
        for _ in 0..<4 {
            await fixture.budget.record(RateLimitSignal(statusCode: 429), host: "h")
            blocked.append(await fixture.budget.status(host: "h").blockedFor)
            await fixture.clock.advance(by: blocked.last ?? .zero)
        }
        #expect(blocked.map { Int($0.inSeconds.rounded()) } == [5, 10, 20, 40])
        await fixture.budget.record(RateLimitSignal(statusCode: 200), host: "h")
        await fixture.budget.record(RateLimitSignal(statusCode: 429), host: "h")
        #expect(Int(await fixture.budget.status(host: "h").blockedFor.inSeconds.rounded()) == 5)
    }

    @Test func hostsAreIndependentAndAccountsOnOneHostShare() async throws {
        let fixture = BudgetFixture(.init(requestsPerWindow: 2, window: .seconds(10)))
        // Two accounts on the same host draw from one bucket; host names ignore case.
        try await fixture.budget.acquire(host: "social.example")
        try await fixture.budget.acquire(host: "SOCIAL.example")
        let (waiting, isPending) = await fixture.pendingAcquire(host: "Social.Example")
        #expect(isPending)
        // Another host is unaffected.
        try await fixture.budget.acquire(host: "other.example")
        #expect(fixture.clock.now.offset == .zero)
        try await fixture.clock.run(until: waiting)
        #expect(fixture.clock.now.offset == .seconds(5))
    }

    @Test func cancelledWaiterThrowsAndTakesNoToken() async throws {
        let fixture = BudgetFixture(.init(requestsPerWindow: 1, window: .seconds(10)))
        try await fixture.budget.acquire(host: "h")
        let (waiting, isPending) = await fixture.pendingAcquire(host: "h")
        #expect(isPending)
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        await fixture.clock.advance(by: .seconds(10))
        #expect(await fixture.budget.status(host: "h").availableTokens == 1)
        try await fixture.budget.acquire(host: "h")
        #expect(fixture.clock.now.offset == .seconds(10))
    }

    @Test func malformedHeadersAreIgnored() async {
        let fixture = BudgetFixture()
        await fixture.budget.record(
            RateLimitSignal(statusCode: 200, retryAfter: "soon", limit: "-3", remaining: "lots", reset: "tomorrow"),
            host: "h")
        await fixture.budget.record(RateLimitSignal(statusCode: 200, remaining: "0", reset: "garbage"), host: "h")
        let status = await fixture.budget.status(host: "h")
        #expect(status.blockedFor == .zero)
        #expect(status.halvedFor == .zero)
        #expect(status.availableTokens == 0, "Remaining 0 is still believed, even without a usable reset")
    }
}

@Suite(.timeLimit(.minutes(1))) struct RateBudgetConcurrencyTests {
    @Test func concurrentRequestersNeverExceedTheBudget() async throws {
        let fixture = BudgetFixture(.init(requestsPerWindow: 5, window: .seconds(10)))
        let times = EventLog()
        let everyone = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<25 {
                    group.addTask {
                        // Two accounts on one host, alternating.
                        try await fixture.budget.acquire(host: index.isMultiple(of: 2) ? "h" : "H")
                        await times.append(String(fixture.clock.now.offset.components.seconds))
                    }
                }
                try await group.waitForAll()
            }
        }
        try await fixture.clock.run(until: everyone)
        let seconds = await times.events.compactMap { Int($0) }.sorted()
        #expect(seconds.count == 25)
        // A burst of 5, then one every 2 s (5 per 10 s).
        #expect(seconds == Array(repeating: 0, count: 5) + (1...20).map { $0 * 2 })
        // In any 10-second window at most 5 + 5 requests start (burst plus refill), never more.
        for start in 0...40 {
            #expect(seconds.filter { $0 >= start && $0 < start + 10 }.count <= 10)
        }
    }
}
