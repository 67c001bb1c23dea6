import TidingsCore

/// The reconnection schedule of the Socket.IO JavaScript client: exponential growth with a random
/// deviation, capped.
///
/// Attempt `n` (from 1) waits `delay · 2^(n-1)`, moved up or down by up to `randomizationFactor` of
/// itself, then capped at `maximumDelay`. With the defaults: about 1 s, 2 s, 4 s, then 5 s.
public struct SocketIOReconnectPolicy: Sendable, Hashable {
    /// The first delay before randomization.
    public var delay: Duration
    /// The cap of every delay.
    public var maximumDelay: Duration
    /// How far (0...1) a delay may deviate from its nominal value.
    public var randomizationFactor: Double
    /// How many attempts to make before giving up; `nil` for no limit.
    public var maximumAttempts: Int?

    /// A policy; the defaults are the JavaScript client's.
    public init(
        delay: Duration = .seconds(1),
        maximumDelay: Duration = .seconds(5),
        randomizationFactor: Double = 0.5,
        maximumAttempts: Int? = nil
    ) {
        self.delay = delay
        self.maximumDelay = maximumDelay
        self.randomizationFactor = min(max(randomizationFactor, 0), 1)
        self.maximumAttempts = maximumAttempts
    }

    /// The wait before attempt `attempt` (1-based), given a random number in `0..<1`.
    ///
    /// Pure: the same inputs give the same delay, so tests pin the random number.
    public func delay(forAttempt attempt: Int, random: Double) -> Duration {
        let base = delay.inSeconds
        let exponent = Double(min(max(attempt - 1, 0), 62))
        var seconds = base * pow2(exponent)
        if randomizationFactor > 0 {
            let random = min(max(random, 0), 0.999_999)
            let deviation = random * randomizationFactor * seconds
            // Like the JavaScript client, the same random number picks the direction.
            seconds = Int(random * 10) % 2 == 0 ? seconds - deviation : seconds + deviation
        }
        let capped = min(seconds, maximumDelay.inSeconds)
        return .milliseconds(Int64(max(capped, 0) * 1000))
    }

    private func pow2(_ exponent: Double) -> Double {
        var result = 1.0
        var remaining = Int(exponent)
        while remaining > 0 && result < 1e12 {
            result *= 2
            remaining -= 1
        }
        return result
    }
}
