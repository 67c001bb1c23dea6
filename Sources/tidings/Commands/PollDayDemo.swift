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
private enum ServerAnswer {
    case ok
    case unavailable
    case tooManyRequests(retryAfterSeconds: Int)
}

/// One day of TidingsCore's `PollLoop` (the scheduler every backend's polling runs on) against a simulated
/// server: every 2 minutes from 07:00 to 23:00, every 15 minutes at night; the server is down from 09:00 to
/// 09:40 (the loop backs off with full jitter, 30 s base, capped at 15 minutes) and answers 429 with
/// `Retry-After: 300` from 15:00 to 15:02 (nothing goes before it ends). All on a virtual clock.
func pollDayDemo() async {
    let clock = TestClock()
    let random = SeededUnitRandom(seed: 2026)
    let budget = RateBudget(configuration: .mastodon, clock: clock, random: { random.next() })
    let log = PollLog()
    let host = "social.example"

    let loop = PollLoop(
        clock: clock, random: { random.next() },
        schedule: {
            let hour = Int(clock.now.offset.components.seconds) / 3600
            return .every((7..<23).contains(hour) ? .seconds(120) : .seconds(900))
        },
        tick: {
            do {
                try await budget.acquire(host: host)
            } catch {
                return .failed
            }
            let second = Int(clock.now.offset.components.seconds)
            switch serverAnswer(atSecond: second) {
            case .ok:
                await budget.record(RateLimitSignal(statusCode: 200, headers: [:]), host: host)
                log.record(second: second, note: nil)
                return .success
            case .unavailable:
                await budget.record(RateLimitSignal(statusCode: 503, headers: [:]), host: host)
                log.record(second: second, note: "503")
                return .failed
            case .tooManyRequests(let retryAfter):
                let signal = RateLimitSignal(statusCode: 429, headers: ["Retry-After": String(retryAfter)])
                await budget.record(signal, host: host)
                log.record(second: second, note: "429 with Retry-After: \(retryAfter)s")
                return .rateLimited(retryAfter: .seconds(retryAfter))
            }
        })
    let task = Task { await loop.run() }
    // Deadline by deadline, each tick finished before the clock moves on: the same day every run.
    await PollLoopDriver.run([loop], clock: clock, until: VirtualInstant(offset: .seconds(24 * 3600)))
    task.cancel()
    await task.value

    let hours = log.requestsPerHour()
    print(
        "Polling: one virtual day of PollLoop, \(log.total) requests (\(log.failures) failed), rate budget 300 per 5 minutes."
    )
    print("  requests per hour: " + hours.map(String.init).joined(separator: " "))
    print("  failures, each followed by the next tick (full-jitter backoff, 30 s base, 15 min cap; or Retry-After):")
    for line in log.failureLines() { print("    \(line)") }
}

private func serverAnswer(atSecond second: Int) -> ServerAnswer {
    if (9 * 3600)..<(9 * 3600 + 40 * 60) ~= second { return .unavailable }
    if (15 * 3600)..<(15 * 3600 + 120) ~= second { return .tooManyRequests(retryAfterSeconds: 300) }
    return .ok
}

private func clockTime(_ second: Int) -> String {
    String(format: "%02d:%02d:%02d", second / 3600, (second / 60) % 60, second % 60)
}

/// The loop's record of the day.
private final class PollLog: Sendable {
    private struct State {
        var ticks: [(second: Int, note: String?)] = []
    }
    private let state = LockedState(State())

    func record(second: Int, note: String?) {
        state.withLock { locked in locked.ticks.append((second, note)) }
    }

    var total: Int { state.withLock { locked in locked.ticks.count } }
    var failures: Int { state.withLock { locked in locked.ticks.filter { $0.note != nil }.count } }

    func requestsPerHour() -> [Int] {
        state.withLock { locked in
            var perHour = [Int](repeating: 0, count: 24)
            for tick in locked.ticks { perHour[min(tick.second / 3600, 23)] += 1 }
            return perHour
        }
    }

    /// Each failure with the time of the tick after it.
    func failureLines() -> [String] {
        state.withLock { locked in
            locked.ticks.indices.compactMap { index in
                guard let note = locked.ticks[index].note else { return nil }
                let next = index + 1 < locked.ticks.count ? clockTime(locked.ticks[index + 1].second) : "—"
                return "\(clockTime(locked.ticks[index].second))  \(note), next tick \(next)"
            }
        }
    }
}
