import Foundation

/// A `RateBudget` paces requests per host with a token bucket shared by every account on that host.
///
/// Keep one instance per process and call ``acquire(host:)`` before each request and
/// ``record(_:host:)`` with each response. Guarantees, per host:
/// - At most `requestsPerWindow` requests in a burst, refilled evenly over `window`
///   (Mastodon's default: 300 per 5 minutes).
/// - No request before a `Retry-After` has passed (delta-seconds or HTTP-date).
/// - When `X-RateLimit-Remaining` reaches 0, no request before `X-RateLimit-Reset`.
/// - After a 429 without `Retry-After`: a jittered exponential backoff, and half the refill rate
///   for `penaltyDuration` (one hour), after which the full rate returns.
///
/// All waiting goes through the injected clock, so tests drive it with ``TestClock``.
/// For example:
///
/// ```swift
/// let budget = RateBudget(clock: ContinuousClock())
/// try await budget.acquire(host: "mastodon.social")
/// let response = try await send(request)
/// await budget.record(RateLimitSignal(statusCode: response.status, headers: response.headers), host: "mastodon.social")
/// ```
public actor RateBudget {
    /// How a budget paces one host.
    public struct Configuration: Sendable, Hashable {
        /// Bucket capacity: requests allowed in a burst and per window.
        public var requestsPerWindow: Int
        /// The window over which the bucket refills completely.
        public var window: Duration
        /// How long the refill rate stays halved after a 429 without `Retry-After`.
        public var penaltyDuration: Duration
        /// Backoff after 429s without `Retry-After` (first ceiling, largest delay).
        public var backoffBase: Duration
        /// The largest backoff delay.
        public var backoffCap: Duration

        /// Creates a configuration; non-positive counts and durations fall back to safe minimums.
        public init(
            requestsPerWindow: Int = 300, window: Duration = .seconds(300), penaltyDuration: Duration = .seconds(3600),
            backoffBase: Duration = .seconds(5), backoffCap: Duration = .seconds(300)
        ) {
            self.requestsPerWindow = max(1, requestsPerWindow)
            self.window = max(window, .milliseconds(1))
            self.penaltyDuration = max(penaltyDuration, .zero)
            self.backoffBase = backoffBase
            self.backoffCap = backoffCap
        }

        /// Mastodon's documented limit: 300 requests per 5 minutes.
        public static let mastodon = Configuration()
    }

    /// What the budget currently thinks of one host (for diagnostics, demos and tests).
    public struct HostStatus: Sendable, Hashable {
        /// Requests that could go right now without waiting for a refill.
        public var availableTokens: Double
        /// How long until any request may go because of `Retry-After`, a reset or a backoff.
        public var blockedFor: Duration
        /// How long the halved refill rate still applies (`.zero` when at full rate).
        public var halvedFor: Duration
    }

    private struct HostState {
        var tokens: Double
        var lastRefill: Duration
        var notBefore: Duration = .zero
        var penaltyUntil: Duration = .zero
        var serverLimit: Int?
        var backoff: Backoff
    }

    private let configuration: Configuration
    private let timeline: Timeline
    private let wallClock: @Sendable () -> Date
    private let random: @Sendable () -> Double
    private var hosts: [String: HostState] = [:]

    /// Creates an empty budget; each host starts with a full bucket.
    ///
    /// - Parameters:
    ///   - configuration: Limits per host (Mastodon's by default).
    ///   - clock: Every wait goes through it.
    ///   - wallClock: The current date, for `Retry-After` HTTP-dates and `X-RateLimit-Reset`
    ///     timestamps; tests pass one derived from their virtual clock.
    ///   - random: Jitter source in `0..<1` for the backoff.
    public init(
        configuration: Configuration = .mastodon, clock: any Clock<Duration>,
        wallClock: @escaping @Sendable () -> Date = { Date() },
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.configuration = configuration
        self.timeline = Timeline(clock)
        self.wallClock = wallClock
        self.random = random
    }

    /// Waits until a request to `host` is allowed, then takes one token.
    ///
    /// Waiters on one host are served as the clock wakes them (deadline order).
    ///
    /// - Throws: `CancellationError` if the task is cancelled while waiting; no token is taken then.
    public func acquire(host: String) async throws {
        let key = host.lowercased()
        while true {
            try Task.checkCancellation()
            let now = timeline.elapsed
            var state = refilled(key, at: now)
            if now < state.notBefore {
                hosts[key] = state
                try await timeline.sleep(until: state.notBefore)
                continue
            }
            // A hair below 1 counts as 1: refills are floating point.
            if state.tokens >= 1 - 1e-9 {
                state.tokens = max(0, state.tokens - 1)
                hosts[key] = state
                return
            }
            hosts[key] = state
            let missing = 1 - state.tokens
            let seconds = missing / refillRate(state, at: now)
            try await timeline.sleep(until: now + Self.roundedUp(seconds))
        }
    }

    /// Learns from one response from `host`; malformed header values are ignored.
    public func record(_ signal: RateLimitSignal, host: String) {
        let key = host.lowercased()
        let now = timeline.elapsed
        var state = refilled(key, at: now)
        let wallNow = wallClock()

        if let limit = signal.limit.flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }), limit > 0 {
            state.serverLimit = limit
            state.tokens = min(state.tokens, Double(capacity(state)))
        }
        if let remaining = signal.remaining.flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }) {
            // The server's count wins when it is lower: other clients may share the account.
            state.tokens = min(state.tokens, Double(max(0, remaining)))
            if remaining <= 0, let reset = signal.reset.flatMap(HTTPDate.parseTimestamp) {
                Self.block(&state, until: now + Duration.clampedSeconds(reset.timeIntervalSince(wallNow)))
            }
        }
        if signal.statusCode == 429 { state.tokens = 0 }
        let retryAfter = signal.retryAfter.flatMap { RetryAfter.parse($0, now: wallNow) }
        if let retryAfter {
            Self.block(&state, until: now + retryAfter)
        } else if signal.statusCode == 429 {
            state.penaltyUntil = now + configuration.penaltyDuration
            Self.block(&state, until: now + state.backoff.nextDelay())
        }
        if (200..<400).contains(signal.statusCode) {
            state.backoff.reset()
        }
        hosts[key] = state
    }

    /// The current view of `host`.
    public func status(host: String) -> HostStatus {
        let key = host.lowercased()
        let now = timeline.elapsed
        let state = refilled(key, at: now)
        hosts[key] = state
        return HostStatus(
            availableTokens: state.tokens, blockedFor: max(.zero, state.notBefore - now),
            halvedFor: max(.zero, state.penaltyUntil - now))
    }

    // MARK: - Bucket arithmetic

    /// Holds every request until `instant`; when the hold lifts one request may go at once and the
    /// rest follow at the refill rate, so a lifted block never turns into a burst.
    private static func block(_ state: inout HostState, until instant: Duration) {
        guard instant > state.notBefore else { return }
        state.notBefore = instant
        state.tokens = 1
        state.lastRefill = instant
    }

    private func capacity(_ state: HostState) -> Int {
        min(configuration.requestsPerWindow, state.serverLimit ?? Int.max)
    }

    /// Tokens per second at `instant`, halved during a penalty.
    private func refillRate(_ state: HostState, at instant: Duration) -> Double {
        let full = Double(capacity(state)) / configuration.window.inSeconds
        return instant < state.penaltyUntil ? full / 2 : full
    }

    /// The host's state with tokens refilled up to `now`, the penalty boundary split exactly.
    private func refilled(_ key: String, at now: Duration) -> HostState {
        guard var state = hosts[key] else {
            let fresh = HostState(
                tokens: Double(configuration.requestsPerWindow), lastRefill: now,
                backoff: Backoff(base: configuration.backoffBase, cap: configuration.backoffCap, random: random))
            return fresh
        }
        guard now > state.lastRefill else { return state }
        var added = 0.0
        let penaltyEnd = min(max(state.penaltyUntil, state.lastRefill), now)
        added += (penaltyEnd - state.lastRefill).inSeconds * refillRate(state, at: state.lastRefill)
        added += (now - penaltyEnd).inSeconds * refillRate(state, at: now)
        state.tokens = min(Double(capacity(state)), state.tokens + added)
        state.lastRefill = now
        return state
    }

    /// Seconds as a duration rounded up to whole milliseconds (at least one), so a waiter never
    /// wakes a hair before its token and spins.
    private static func roundedUp(_ seconds: Double) -> Duration {
        guard seconds.isFinite else { return .seconds(3600) }
        let milliseconds = min(max((seconds * 1000).rounded(.up), 1), 9.2e12)
        return .milliseconds(Int64(milliseconds))
    }
}
