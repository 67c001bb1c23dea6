/// A `TokenBucket` is the arithmetic behind each of ``RateBudget``'s buckets: `limit.requests`
/// tokens refilled evenly over `limit.window`, at half that rate during a penalty, and never more
/// than the server's own limit once it has said one.
struct TokenBucket: Sendable {
    private(set) var tokens: Double
    private var lastRefill: Duration
    let limit: RateBudget.Limit
    /// `X-RateLimit-Limit`, once the server has sent it.
    var serverLimit: Int? {
        didSet { tokens = min(tokens, Double(capacity)) }
    }
    /// Until when the refill rate is halved.
    var penaltyUntil: Duration = .zero

    /// A full bucket at `now`.
    init(limit: RateBudget.Limit, now: Duration) {
        self.limit = limit
        tokens = Double(limit.requests)
        lastRefill = now
    }

    var capacity: Int { min(limit.requests, serverLimit ?? Int.max) }

    /// Tokens per second at `instant`, halved during a penalty.
    func refillRate(at instant: Duration) -> Double {
        let full = Double(capacity) / limit.window.inSeconds
        return instant < penaltyUntil ? full / 2 : full
    }

    /// Adds the tokens refilled since the last call, splitting the penalty boundary exactly.
    mutating func refill(to now: Duration) {
        guard now > lastRefill else { return }
        var added = 0.0
        let penaltyEnd = min(max(penaltyUntil, lastRefill), now)
        added += (penaltyEnd - lastRefill).inSeconds * refillRate(at: lastRefill)
        added += (now - penaltyEnd).inSeconds * refillRate(at: now)
        tokens = min(Double(capacity), tokens + added)
        lastRefill = now
    }

    /// When the next token is there: `now` if it already is. Refills are floating point, so a hair
    /// below 1 counts as 1.
    func nextTokenAt(_ now: Duration) -> Duration {
        guard tokens < 1 - 1e-9 else { return now }
        return now + Self.roundedUp((1 - tokens) / refillRate(at: now))
    }

    mutating func take() { tokens = max(0, tokens - 1) }

    /// Believes a lower count from the server: other clients may share the account.
    mutating func lower(to count: Double) { tokens = min(tokens, max(0, count)) }

    /// Lets at least one request go now.
    mutating func allowOne() { tokens = max(tokens, 1) }

    /// One token at `instant` and nothing before, so a lifted hold never turns into a burst: the
    /// first request goes when it lifts and the rest follow at the refill rate.
    mutating func restart(at instant: Duration) {
        tokens = 1
        lastRefill = instant
    }

    /// Seconds as a duration rounded up to whole milliseconds (at least one), so a waiter never
    /// wakes a hair before its token and spins.
    private static func roundedUp(_ seconds: Double) -> Duration {
        guard seconds.isFinite else { return .seconds(3600) }
        let milliseconds = min(max((seconds * 1000).rounded(.up), 1), 9.2e12)
        return .milliseconds(Int64(milliseconds))
    }
}
