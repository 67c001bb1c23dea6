import Foundation
import TidingsCore

/// A deterministic source of numbers in `0..<1`, so that the demo prints the same day every run.
private final class SeededUnitRandom: Sendable {
    private let state: LockedState<UInt64>

    init(seed: UInt64) { state = LockedState(seed) }

    func next() -> Double {
        state.withLock { state in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(state >> 11) / Double(1 << 53)
        }
    }
}

/// What the simulated server answers at a given time of day.
private enum PollOutcome {
    case ok
    case unavailable
    case tooManyRequests(retryAfterSeconds: Int)
}

/// One day of a poller: every 2 minutes from 07:00 to 23:00, every 15 minutes at night; the server is down
/// from 09:00 to 09:40 and answers 429 once at 15:00. All of it runs on a virtual clock in milliseconds.
func pollDayDemo() async {
    let clock = TestClock()
    let random = SeededUnitRandom(seed: 2026)
    let budget = RateBudget(configuration: .mastodon, clock: clock, random: { random.next() })
    let log = PollLog()

    func outcome(atSecond second: Int) -> PollOutcome {
        if (9 * 3600)..<(9 * 3600 + 40 * 60) ~= second { return .unavailable }
        if (15 * 3600)..<(15 * 3600 + 120) ~= second { return .tooManyRequests(retryAfterSeconds: 300) }
        return .ok
    }

    let poller = Task {
        var backoff = Backoff(base: .seconds(5), cap: .seconds(10 * 60), random: { random.next() })
        while true {
            try await budget.acquire(host: "social.example")
            let second = Int(clock.now.offset.components.seconds)
            guard second < 24 * 3600 else { return }
            let delay: Duration
            switch outcome(atSecond: second) {
            case .ok:
                await budget.record(RateLimitSignal(statusCode: 200, headers: [:]), host: "social.example")
                backoff.reset()
                log.record(second: second, failed: false, note: nil)
                let hour = second / 3600
                delay = (7..<23).contains(hour) ? .seconds(120) : .seconds(900)
            case .unavailable:
                await budget.record(RateLimitSignal(statusCode: 503, headers: [:]), host: "social.example")
                delay = backoff.nextDelay()
                log.record(second: second, failed: true, note: "503, retry in \(formatted(delay))")
            case .tooManyRequests(let retryAfter):
                let signal = RateLimitSignal(statusCode: 429, headers: ["Retry-After": String(retryAfter)])
                await budget.record(signal, host: "social.example")
                delay = .seconds(120)
                log.record(second: second, failed: true, note: "429 with Retry-After: \(retryAfter)s")
            }
            try await clock.sleep(for: delay)
        }
    }
    // Steps from one deadline to the next only while the poller sleeps, so the day is the same every run.
    _ = try? await clock.run(until: poller, maxSteps: 100_000)

    let hours = log.requestsPerHour()
    print("Polling: one virtual day, \(log.total) requests (\(log.failures) failed), rate budget 300 per 5 minutes.")
    print("  requests per hour: " + hours.map(String.init).joined(separator: " "))
    print("  failures, each followed by a jittered exponential backoff (5 s base, 10 min cap) or Retry-After:")
    for line in log.notes { print("    \(line)") }
}

private func formatted(_ duration: Duration) -> String {
    let seconds = Int(duration.components.seconds)
    return seconds >= 60 ? "\(seconds / 60)m\(String(format: "%02d", seconds % 60))s" : "\(seconds)s"
}

private func clockTime(_ second: Int) -> String {
    String(format: "%02d:%02d:%02d", second / 3600, (second / 60) % 60, second % 60)
}

/// The poller's record of the day.
private final class PollLog: Sendable {
    private struct State {
        var perHour = [Int](repeating: 0, count: 24)
        var failureCount = 0
        var lines: [String] = []
    }
    private let state = LockedState(State())

    func record(second: Int, failed: Bool, note: String?) {
        state.withLock { locked in
            locked.perHour[min(second / 3600, 23)] += 1
            if failed { locked.failureCount += 1 }
            if let note { locked.lines.append("\(clockTime(second))  \(note)") }
        }
    }

    var total: Int { state.withLock { locked in locked.perHour.reduce(0, +) } }
    var failures: Int { state.withLock { locked in locked.failureCount } }
    var notes: [String] { state.withLock { locked in locked.lines } }
    func requestsPerHour() -> [Int] { state.withLock { locked in locked.perHour } }
}
