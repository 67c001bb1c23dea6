import PeerSupport
import Testing

@testable import TidingsCore

@Suite(.timeLimit(.minutes(1))) struct BackoffTests {
    @Test func ceilingDoublesUpToTheCap() {
        let backoff = Backoff(base: .seconds(1), cap: .seconds(60))
        let ceilings = (0...9).map { backoff.ceiling(afterFailures: $0) }
        #expect(ceilings == [0, 1, 2, 4, 8, 16, 32, 60, 60, 60].map { Duration.seconds($0) })
        #expect(backoff.ceiling(afterFailures: Int.max) == .seconds(60))
    }

    @Test func fullJitterScalesTheCeilingByTheInjectedRandom() {
        var backoff = Backoff(base: .seconds(2), cap: .seconds(100), random: { 0.5 })
        let delays = (0..<8).map { _ in backoff.nextDelay() }
        #expect(delays == [1, 2, 4, 8, 16, 32, 50, 50].map { Duration.seconds($0) })
        #expect(backoff.failures == 8)

        var zero = Backoff(base: .seconds(2), cap: .seconds(100), random: { 0 })
        #expect((0..<5).map { _ in zero.nextDelay() } == Array(repeating: .zero, count: 5))
    }

    @Test func resetStartsOverAtBase() {
        var backoff = Backoff(base: .milliseconds(500), cap: .seconds(30), random: { 0.999 })
        for _ in 0..<10 { _ = backoff.nextDelay() }
        #expect(backoff.nextDelay() <= .seconds(30))
        backoff.reset()
        #expect(backoff.failures == 0)
        let first = backoff.nextDelay()
        #expect(first <= .milliseconds(500))
        #expect(first >= .milliseconds(499))
    }

    @Test func seededGeneratorGivesReproducibleBoundedSchedules() {
        func schedule() -> [Duration] {
            var generator = SplitMix64(seed: 42)
            var backoff = Backoff(base: .seconds(1), cap: .seconds(60))
            return (0..<20).map { _ in backoff.nextDelay(using: &generator) }
        }
        let first = schedule()
        #expect(first == schedule())
        let reference = Backoff(base: .seconds(1), cap: .seconds(60))
        for (index, delay) in first.enumerated() {
            #expect(delay >= .zero)
            #expect(delay <= reference.ceiling(afterFailures: index + 1))
        }
        // Jitter actually spreads: not every delay sits at its ceiling.
        #expect(Set(first).count > 10)
    }

    @Test func hostileRandomAndConfigurationNeverTrap() {
        for value in [-5.0, 7.0, .nan, .infinity, -.infinity] {
            var backoff = Backoff(base: .seconds(1), cap: .seconds(10), random: { value })
            for _ in 0..<2000 {
                let delay = backoff.nextDelay()
                #expect(delay >= .zero && delay <= .seconds(10))
            }
        }
        var inverted = Backoff(base: .seconds(10), cap: .seconds(1), random: { 0.9999 })
        #expect(inverted.cap == .seconds(10))
        #expect(inverted.nextDelay() <= .seconds(10))
        var negative = Backoff(base: .seconds(-3), cap: .seconds(-1), random: { 0.5 })
        #expect(negative.nextDelay() == .zero)
    }
}
