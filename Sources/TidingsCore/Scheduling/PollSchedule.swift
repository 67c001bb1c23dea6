/// When a ``PollLoop`` ticks on its own, as its owner's policy decides at each moment.
public enum PollSchedule: Sendable, Hashable {
    /// A tick every `interval` after the start of the previous one (the first at once).
    case every(Duration)
    /// No tick on a timer; only ``PollLoop/requestTick()`` ticks (a manual setting, the background).
    case onRequest
}

/// What one tick of a ``PollLoop`` reports back, so the loop can pace the next one.
public enum PollTickOutcome: Sendable, Hashable {
    /// The tick's requests were answered.
    case success
    /// A request failed (transport, server error, bad answer): exponential backoff with full jitter.
    case failed
    /// The server answered 429. With `retryAfter` the loop sends nothing before it ends; without, it
    /// backs off and halves its frequency for ``PollLoopConfiguration/penaltyDuration``.
    case rateLimited(retryAfter: Duration?)
    /// The account's credentials were refused: the loop stops until ``PollLoop/resume()``.
    case needsReauthentication
}

/// Why a ``PollLoop`` is not ticking right now.
public enum PollLoopWait: Sendable, Hashable {
    /// Until the next tick is due (its interval, a backoff, a `Retry-After` or a budget reset).
    case scheduled
    /// The schedule is ``PollSchedule/onRequest`` and nothing was requested.
    case onRequestOnly
    /// The network path is unsatisfied; the loop waits for ``PollLoop/setNetworkSatisfied(_:)``.
    case offline
    /// The credentials were refused; the loop waits for ``PollLoop/resume()``.
    case needsReauthentication
}

/// One thing a ``PollLoop`` did, in order, for observers (tests, demos, diagnostics).
public enum PollLoopEvent: Sendable, Hashable {
    /// A tick started at this elapsed time of the loop's clock.
    case tickStarted(at: Duration)
    /// A tick ended with this outcome.
    case tickFinished(at: Duration, outcome: PollTickOutcome)
    /// The loop waits: until an elapsed time (`nil`: until something changes), for this reason.
    case waiting(until: Duration?, reason: PollLoopWait)
    /// The observer fell behind and missed this many events.
    case missed(Int)
}

/// How a ``PollLoop`` paces itself after failures.
public struct PollLoopConfiguration: Sendable, Hashable {
    /// The first backoff ceiling after a failure.
    public var backoffBase: Duration
    /// The largest backoff delay (seed 002 §3: 15 minutes).
    public var backoffCap: Duration
    /// How long the frequency stays halved after a 429 without `Retry-After` (an hour).
    public var penaltyDuration: Duration
    /// The longest a `Retry-After` may hold the loop (a hostile server cannot stop it for days).
    public var maximumRetryAfter: Duration

    /// A configuration; negative durations count as zero.
    public init(
        backoffBase: Duration = .seconds(30), backoffCap: Duration = .seconds(15 * 60),
        penaltyDuration: Duration = .seconds(3600), maximumRetryAfter: Duration = .seconds(3600)
    ) {
        self.backoffBase = max(backoffBase, .zero)
        self.backoffCap = max(backoffCap, self.backoffBase)
        self.penaltyDuration = max(penaltyDuration, .zero)
        self.maximumRetryAfter = max(maximumRetryAfter, .zero)
    }
}
