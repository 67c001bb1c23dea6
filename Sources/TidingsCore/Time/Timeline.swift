/// A `Timeline` is any `Clock<Duration>` seen as time elapsed since the timeline was made.
///
/// Types that take `any Clock<Duration>` can store a `Timeline` instead of juggling the clock's own
/// `Instant` type: `elapsed` is a plain `Duration`, and sleeping targets an elapsed value. It is
/// `Sendable` and cheap to copy; copies share the same origin.
///
/// For example:
///
/// ```swift
/// let timeline = Timeline(clock)                 // TestClock, ContinuousClock, ImmediateClock…
/// try await timeline.sleep(until: timeline.elapsed + .seconds(30))
/// ```
public struct Timeline: Sendable {
    private let readElapsed: @Sendable () -> Duration
    private let sleepUntilElapsed: @Sendable (Duration) async throws -> Void

    /// Starts a timeline at the clock's current instant.
    public init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let origin = clock.now
        readElapsed = { origin.duration(to: clock.now) }
        sleepUntilElapsed = { target in try await clock.sleep(until: origin.advanced(by: target), tolerance: nil) }
    }

    /// Time elapsed on the clock since the timeline was made.
    public var elapsed: Duration { readElapsed() }

    /// Suspends until `elapsed` reaches `target` (at once if it already has).
    ///
    /// - Throws: `CancellationError` if the task is cancelled while waiting.
    public func sleep(until target: Duration) async throws {
        try await sleepUntilElapsed(target)
    }

    /// Suspends for `duration` on the underlying clock.
    ///
    /// - Throws: `CancellationError` if the task is cancelled while waiting.
    public func sleep(for duration: Duration) async throws {
        try await sleepUntilElapsed(elapsed + duration)
    }
}
