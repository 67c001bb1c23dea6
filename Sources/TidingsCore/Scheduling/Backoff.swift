/// A `Backoff` computes retry delays: exponential growth with "full jitter", capped.
///
/// After `n` consecutive failures the next delay is uniform in `0...min(cap, base · 2ⁿ)`
/// (the "Full Jitter" of the AWS architecture blog), so clients that failed together do not retry
/// together. It is a plain value: copy it per connection, call ``nextDelay()`` after each failure and
/// ``reset()`` after a success. Randomness is injectable, which makes schedules reproducible in tests.
///
/// For example:
///
/// ```swift
/// var backoff = Backoff(base: .seconds(1), cap: .seconds(60))
/// try await clock.sleep(for: backoff.nextDelay())   // 0…1 s, then 0…2 s, 0…4 s, … never above 60 s
/// backoff.reset()                                    // after the request succeeds
/// ```
public struct Backoff: Sendable {
    /// The delay ceiling after the first failure.
    public var base: Duration
    /// The largest delay ever returned.
    public var cap: Duration
    /// Consecutive failures counted since the last ``reset()``.
    public private(set) var failures: Int = 0
    private let unitRandom: @Sendable () -> Double

    /// Creates a backoff.
    ///
    /// - Parameters:
    ///   - base: The ceiling after the first failure (negative values count as zero).
    ///   - cap: The largest delay (never below `base`).
    ///   - random: Returns a number in `0..<1`; defaults to the system generator. Values outside are clamped.
    public init(
        base: Duration = .seconds(1), cap: Duration = .seconds(300),
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.base = max(base, .zero)
        self.cap = max(cap, self.base)
        self.unitRandom = random
    }

    /// The upper bound of the delay after `failures` consecutive failures: `min(cap, base · 2^(failures-1))`.
    public func ceiling(afterFailures failures: Int) -> Duration {
        guard failures > 0 else { return .zero }
        // Computed in seconds as Double, so 2^n can never overflow an integer before the cap applies.
        let exponent = Double(min(failures - 1, 1000))
        let seconds = min(cap.inSeconds, base.inSeconds * Double(sign: .plus, exponent: Int(exponent), significand: 1))
        return Duration.clampedSeconds(seconds)
    }

    /// Records a failure and returns how long to wait before the next attempt.
    public mutating func nextDelay() -> Duration {
        nextDelay(unit: unitRandom())
    }

    /// Records a failure and returns the delay, drawing the jitter from `generator`.
    public mutating func nextDelay<G: RandomNumberGenerator>(using generator: inout G) -> Duration {
        nextDelay(unit: Double.random(in: 0..<1, using: &generator))
    }

    /// Forgets past failures: the next delay is drawn below `base` again.
    public mutating func reset() { failures = 0 }

    /// Starts from `failures` failures already counted (negative counts as none): the next delay is drawn below
    /// the ceiling after `failures + 1`, as if that many delays had been taken. For a schedule that outlives one
    /// run, like reconnects whose connections keep dropping before they prove healthy.
    public mutating func resume(afterFailures failures: Int) { self.failures = max(0, failures) }

    private mutating func nextDelay(unit: Double) -> Duration {
        failures = failures == Int.max ? failures : failures + 1
        let fraction = unit.isFinite ? min(max(unit, 0), 1) : 0
        let ceiling = ceiling(afterFailures: failures)
        return Duration.clampedSeconds(ceiling.inSeconds * fraction)
    }

}
