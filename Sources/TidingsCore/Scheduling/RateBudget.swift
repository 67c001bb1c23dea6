import Foundation

/// A `RateBudget` paces requests the way servers count them, so that a well-behaved client is never
/// throttled and a hostile or confused server cannot stall it for long.
///
/// Keep one instance per process, call ``acquire(host:account:family:)`` before each request and
/// ``record(_:host:account:family:)`` with each response. Two kinds of bucket must both admit a request:
///
/// - **The host's politeness bucket**, shared by every account and family on a host (Mastodon's
///   per-IP limit): at most `requestsPerWindow` in a burst, refilled evenly over `window`
///   (300 per 5 minutes by default). Only a `Retry-After` on a response other than 429 (typically a
///   503: the whole server is unavailable) holds every request to the host.
/// - **A scope's bucket**, one per (host, account, ``RateLimitFamily``): Mastodon counts per account
///   and gives media uploads and status deletions budgets of their own. It starts from the family's
///   limit in ``Configuration/familyLimits`` and learns from the responses of that scope only:
///   - `X-RateLimit-Limit` lowers its capacity and `X-RateLimit-Remaining` its count;
///   - `Remaining: 0` with an `X-RateLimit-Reset` in the future holds the scope until the reset; a
///     reset already past lets one request go at once to learn the new count;
///   - a 429 with `Retry-After` holds the scope until then;
///   - a 429 that says neither when to retry nor when the window resets: a jittered exponential
///     backoff, and half the refill rate for `penaltyDuration` (one hour), after which the full
///     rate returns.
///   So one account's exhausted uploads never block another account's timeline refresh, nor the
///   same account's.
///
/// Server-supplied delays are never longer than ``Configuration/maximumServerDelay`` (an hour by
/// default). Dates the server sends (`Retry-After` HTTP-dates, `X-RateLimit-Reset` timestamps) are
/// measured against the response's `Date` header when it has a readable one, so a skewed local
/// clock does not stretch them; ``RateLimitReset`` tells delta seconds, epoch seconds and epoch
/// milliseconds apart. The requests of ``acquire(host:)`` and ``record(_:host:)`` belong to the
/// scope of no account in the default family.
///
/// All waiting goes through the injected clock, so tests drive it with ``TestClock``.
/// For example:
///
/// ```swift
/// let budget = RateBudget(clock: ContinuousClock())
/// let family = RateLimitFamily.mastodon(method: "POST", path: "/api/v2/media")
/// try await budget.acquire(host: "mastodon.social", account: "alice", family: family)
/// let response = try await send(request)
/// await budget.record(
///     RateLimitSignal(statusCode: response.status, headers: response.headers),
///     host: "mastodon.social", account: "alice", family: family)
/// ```
public actor RateBudget {
    /// A number of requests per window.
    public struct Limit: Sendable, Hashable {
        /// Requests allowed in a burst and per window (at least 1).
        public var requests: Int
        /// The window over which the bucket refills completely (at least 1 ms).
        public var window: Duration

        /// Creates a limit; non-positive values fall back to the minimums.
        public init(requests: Int, window: Duration) {
            self.requests = max(1, requests)
            self.window = max(window, .milliseconds(1))
        }
    }

    /// How a budget paces hosts and scopes.
    public struct Configuration: Sendable, Hashable {
        /// Bucket capacity: requests allowed in a burst and per window, per host, and per scope of
        /// every family without an entry in ``familyLimits``.
        public var requestsPerWindow: Int
        /// The window over which the bucket refills completely.
        public var window: Duration
        /// Per-scope limits of families metered apart (Mastodon: uploads, deletions, sign-ups).
        public var familyLimits: [RateLimitFamily: Limit]
        /// How long the refill rate stays halved after a 429 that gave no time to wait.
        public var penaltyDuration: Duration
        /// Backoff after 429s that gave no time to wait (first ceiling, largest delay).
        public var backoffBase: Duration
        /// The largest backoff delay.
        public var backoffCap: Duration
        /// The longest a server can hold requests with `Retry-After` or `X-RateLimit-Reset`.
        public var maximumServerDelay: Duration

        /// Creates a configuration; non-positive counts and durations fall back to safe minimums.
        public init(
            requestsPerWindow: Int = 300, window: Duration = .seconds(300), penaltyDuration: Duration = .seconds(3600),
            backoffBase: Duration = .seconds(5), backoffCap: Duration = .seconds(300),
            familyLimits: [RateLimitFamily: Limit] = Configuration.mastodonFamilyLimits,
            maximumServerDelay: Duration = .seconds(3600)
        ) {
            self.requestsPerWindow = max(1, requestsPerWindow)
            self.window = max(window, .milliseconds(1))
            self.penaltyDuration = max(penaltyDuration, .zero)
            self.backoffBase = backoffBase
            self.backoffCap = backoffCap
            self.familyLimits = familyLimits
            self.maximumServerDelay = max(maximumServerDelay, .zero)
        }

        /// Mastodon's documented per-account limits of the families it meters apart.
        public static let mastodonFamilyLimits: [RateLimitFamily: Limit] = [
            .mediaUploads: Limit(requests: 30, window: .seconds(1800)),
            .statusDeletions: Limit(requests: 30, window: .seconds(1800)),
            .accountCreation: Limit(requests: 5, window: .seconds(1800)),
        ]

        /// Mastodon's documented limits: 300 requests per 5 minutes, and its families'.
        public static let mastodon = Configuration()

        /// The limit of one scope's bucket in `family`.
        func limit(of family: RateLimitFamily) -> Limit {
            familyLimits[family] ?? Limit(requests: requestsPerWindow, window: window)
        }
    }

    /// What the budget currently thinks of one scope on one host (for diagnostics, demos and tests).
    public struct HostStatus: Sendable, Hashable {
        /// Requests that could go right now without waiting for a refill (host and scope together).
        public var availableTokens: Double
        /// How long until any request may go because of `Retry-After`, a reset or a backoff.
        public var blockedFor: Duration
        /// How long the scope's halved refill rate still applies (`.zero` when at full rate).
        public var halvedFor: Duration
        /// The scope's last `X-RateLimit-Remaining`, while the window it counted has not reset (`nil`
        /// when the server never said, or once its `X-RateLimit-Reset` has passed).
        public var serverRemaining: Int? = nil
        /// How long until the scope's last `X-RateLimit-Reset` (`nil` when unknown or already past),
        /// so a caller keeping a reserve (a poller) can pause until the window resets.
        public var serverResetIn: Duration? = nil
    }

    private struct ScopeKey: Hashable {
        var host: String
        var account: String?
        var family: RateLimitFamily
    }

    private struct HostState {
        var bucket: TokenBucket
        var notBefore: Duration = .zero
    }

    private struct ScopeState {
        var bucket: TokenBucket
        var notBefore: Duration = .zero
        var backoff: Backoff
        /// The server's last count and when its window resets, as said; reported by `status`, never
        /// used to pace (the bucket already believes the lower count).
        var serverRemaining: Int?
        var serverResetAt: Duration?
    }

    private let configuration: Configuration
    private let timeline: Timeline
    private let wallClock: @Sendable () -> Date
    private let random: @Sendable () -> Double
    private var hosts: [String: HostState] = [:]
    private var scopes: [ScopeKey: ScopeState] = [:]

    /// Creates an empty budget; each host and scope starts with a full bucket.
    ///
    /// - Parameters:
    ///   - configuration: Limits per host and scope (Mastodon's by default).
    ///   - clock: Every wait goes through it.
    ///   - wallClock: The current date, for `Retry-After` HTTP-dates and `X-RateLimit-Reset`
    ///     timestamps of responses without a `Date` header; tests pass one derived from their
    ///     virtual clock.
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

    /// Waits until `host`'s politeness bucket and the scope's bucket both allow a request, then
    /// takes one token from each.
    ///
    /// Waiters are served as the clock wakes them (deadline order).
    ///
    /// - Parameters:
    ///   - host: Matched case-insensitively.
    ///   - account: Who the request is made as, matched exactly; any stable identifier that is not
    ///     a secret (`"alice@mastodon.social"`, never a token). `nil` for requests without an account.
    ///   - family: The endpoint family the server meters the request in.
    /// - Throws: `CancellationError` if the task is cancelled while waiting; no token is taken then.
    public func acquire(host: String, account: String?, family: RateLimitFamily = .default) async throws {
        let key = ScopeKey(host: host.lowercased(), account: account, family: family)
        while true {
            try Task.checkCancellation()
            let now = timeline.elapsed
            var hostState = self.hostState(key.host, at: now)
            var scope = scopeState(key, at: now)
            let wake = max(
                hostState.notBefore, scope.notBefore, hostState.bucket.nextTokenAt(now), scope.bucket.nextTokenAt(now))
            if wake <= now {
                hostState.bucket.take()
                scope.bucket.take()
            }
            hosts[key.host] = hostState
            scopes[key] = scope
            if wake <= now { return }
            try await timeline.sleep(until: wake)
        }
    }

    /// ``acquire(host:account:family:)`` for a request without an account in the default family.
    public func acquire(host: String) async throws {
        try await acquire(host: host, account: nil, family: .default)
    }

    /// Learns from one response to a request of this scope; malformed header values are ignored.
    public func record(_ signal: RateLimitSignal, host: String, account: String?, family: RateLimitFamily = .default) {
        let key = ScopeKey(host: host.lowercased(), account: account, family: family)
        let now = timeline.elapsed
        var hostState = self.hostState(key.host, at: now)
        var scope = scopeState(key, at: now)
        // Server dates are measured on the server's clock when the response says what time it was there.
        let serverNow = signal.date.flatMap(HTTPDate.parse) ?? wallClock()
        let maximum = configuration.maximumServerDelay
        var toldWhen = false

        if let limit = signal.limit.flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }), limit > 0 {
            scope.bucket.serverLimit = limit
        }
        if signal.statusCode == 429 { scope.bucket.lower(to: 0) }
        if let remaining = signal.remaining.flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }) {
            scope.bucket.lower(to: Double(remaining))
            scope.serverRemaining = remaining
            scope.serverResetAt = signal.reset.flatMap({ RateLimitReset.delay($0, now: serverNow) }).map {
                now + min($0, maximum)
            }
            if remaining <= 0, let reset = signal.reset.flatMap({ RateLimitReset.delay($0, now: serverNow) }) {
                toldWhen = true
                if reset > .zero {
                    Self.hold(&scope.notBefore, &scope.bucket, until: now + min(reset, maximum))
                } else {
                    scope.bucket.allowOne()
                }
            }
        }
        if let retryAfter = signal.retryAfter.flatMap({ RetryAfter.parse($0, now: serverNow) }) {
            toldWhen = true
            if signal.statusCode == 429 {
                Self.hold(&scope.notBefore, &scope.bucket, until: now + min(retryAfter, maximum))
            } else {
                Self.hold(&hostState.notBefore, &hostState.bucket, until: now + min(retryAfter, maximum))
            }
        }
        if signal.statusCode == 429 && !toldWhen {
            scope.bucket.penaltyUntil = now + configuration.penaltyDuration
            Self.hold(&scope.notBefore, &scope.bucket, until: now + scope.backoff.nextDelay())
        }
        if (200..<400).contains(signal.statusCode) {
            scope.backoff.reset()
        }
        hosts[key.host] = hostState
        scopes[key] = scope
    }

    /// ``record(_:host:account:family:)`` for a request without an account in the default family.
    public func record(_ signal: RateLimitSignal, host: String) {
        record(signal, host: host, account: nil, family: .default)
    }

    /// The current view of one scope on `host`, its host's politeness bucket and holds included.
    public func status(host: String, account: String?, family: RateLimitFamily = .default) -> HostStatus {
        let key = ScopeKey(host: host.lowercased(), account: account, family: family)
        let now = timeline.elapsed
        let hostState = self.hostState(key.host, at: now)
        let scope = scopeState(key, at: now)
        hosts[key.host] = hostState
        scopes[key] = scope
        // What the server said holds until its window resets; without a reset time, until it says more.
        let resetIn = scope.serverResetAt.map { $0 - now }
        let windowOpen = resetIn.map { $0 > .zero } ?? true
        return HostStatus(
            availableTokens: min(hostState.bucket.tokens, scope.bucket.tokens),
            blockedFor: max(.zero, max(hostState.notBefore, scope.notBefore) - now),
            halvedFor: max(.zero, scope.bucket.penaltyUntil - now),
            serverRemaining: windowOpen ? scope.serverRemaining : nil,
            serverResetIn: resetIn.flatMap { $0 > .zero ? $0 : nil })
    }

    /// ``status(host:account:family:)`` of the scope without an account in the default family.
    public func status(host: String) -> HostStatus {
        status(host: host, account: nil, family: .default)
    }

    // MARK: - State

    /// Holds every request of one bucket until `instant`; later holds win, earlier ones are moot.
    private static func hold(_ notBefore: inout Duration, _ bucket: inout TokenBucket, until instant: Duration) {
        guard instant > notBefore else { return }
        notBefore = instant
        bucket.restart(at: instant)
    }

    /// The host's state refilled up to `now` (a full bucket the first time).
    private func hostState(_ host: String, at now: Duration) -> HostState {
        guard var state = hosts[host] else {
            let limit = Limit(requests: configuration.requestsPerWindow, window: configuration.window)
            return HostState(bucket: TokenBucket(limit: limit, now: now))
        }
        state.bucket.refill(to: now)
        return state
    }

    /// The scope's state refilled up to `now` (a full bucket of its family's limit the first time).
    private func scopeState(_ key: ScopeKey, at now: Duration) -> ScopeState {
        guard var state = scopes[key] else {
            return ScopeState(
                bucket: TokenBucket(limit: configuration.limit(of: key.family), now: now),
                backoff: Backoff(base: configuration.backoffBase, cap: configuration.backoffCap, random: random))
        }
        state.bucket.refill(to: now)
        return state
    }
}
