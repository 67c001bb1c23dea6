import Foundation

/// An `ImmediateClock` never waits: `sleep` returns at once and moves `now` to the deadline.
///
/// It suits demos and previews that run a schedule (a day of polling) in a blink while still
/// reporting believable times. Cancellation is honoured: a cancelled task's `sleep` throws.
public final class ImmediateClock: Clock, Sendable {
    /// A point on the clock: virtual time since the clock was made.
    public typealias Instant = VirtualInstant

    private struct State {
        var currentInstant = Instant(offset: .zero)
    }
    private let state = LockedState(State())

    /// Creates a clock at instant zero.
    public init() {}

    /// The time slept so far.
    public var now: Instant { state.withLock { locked in locked.currentInstant } }

    /// The clock has no resolution limit.
    public var minimumResolution: Duration { .zero }

    /// Moves `now` to `deadline` (if later) and returns without waiting.
    ///
    /// - Throws: `CancellationError` if the task is cancelled.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        state.withLock { locked in
            if locked.currentInstant < deadline { locked.currentInstant = deadline }
        }
        // Let other tasks run, as a real sleep would.
        await Task.yield()
        try Task.checkCancellation()
    }
}
