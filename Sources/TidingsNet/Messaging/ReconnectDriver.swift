import TidingsCore

/// Reopens a lost connection: waits a `Backoff` delay (full jitter, capped) on the injected clock
/// before each attempt, until one succeeds or the task is cancelled.
///
/// A copy of the backoff is used per run, so every outage starts again from its base delay, unless the run is
/// told how many attempts came before it (``run(afterFailures:isolation:attempt:)``): those since the last
/// connection that proved healthy (``ReconnectHealth``), so a server that accepts and drops at once meets a
/// growing delay instead of a reconnect every second.
/// Pass a `Backoff` with a seeded `random` to make the schedule reproducible in tests.
public struct ReconnectDriver: Sendable {
    /// The delays between attempts.
    public var backoff: Backoff
    /// Every delay runs on it.
    public let clock: any Clock<Duration>

    /// Creates a driver.
    public init(backoff: Backoff, clock: any Clock<Duration>) {
        self.backoff = backoff
        self.clock = clock
    }

    /// Runs attempts until one returns true.
    ///
    /// - Parameters:
    ///   - failures: Attempts that came before this run without a healthy connection since (0: a fresh
    ///     outage); the first delay is drawn as if they had been waited for.
    ///   - isolation: The caller's actor, on which `attempt` runs.
    ///   - attempt: One try to reconnect; returns true when the loop should stop (connected, or no
    ///     longer wanted).
    /// - Returns: The number of attempts made, or nil when the task was cancelled first.
    @discardableResult
    public func run(
        afterFailures failures: Int = 0, isolation: isolated (any Actor)? = #isolation, attempt: () async -> Bool
    ) async -> Int? {
        var backoff = backoff
        backoff.resume(afterFailures: failures)
        var attempts = 0
        while !Task.isCancelled {
            do { try await clock.sleep(for: backoff.nextDelay()) } catch { return nil }
            attempts += 1
            if await attempt() { return attempts }
        }
        return nil
    }
}
