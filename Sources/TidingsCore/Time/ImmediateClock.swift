import Foundation

/// An `ImmediateClock` never waits: `sleep` returns at once and moves `now` to the deadline.
///
/// It suits demos and previews that run a schedule (a day of polling) in a blink while still
/// reporting believable times. Cancellation is honoured: a cancelled task's `sleep` throws.
public final class ImmediateClock: Clock, @unchecked Sendable {
    /// A point on an ``ImmediateClock``: the time slept away since the clock was made.
    public struct Instant: InstantProtocol, Sendable, Hashable, CustomStringConvertible {
        /// Time since the clock's origin.
        public var offset: Duration

        /// The instant `offset` after the clock's origin.
        public init(offset: Duration) { self.offset = offset }

        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
        public var description: String { "ImmediateClock.Instant(\(offset))" }
    }

    private let lock = NSLock()
    private var currentInstant = Instant(offset: .zero)

    /// Creates a clock at instant zero.
    public init() {}

    /// The time slept so far.
    public var now: Instant { lock.withLock { currentInstant } }

    /// The clock has no resolution limit.
    public var minimumResolution: Duration { .zero }

    /// Moves `now` to `deadline` (if later) and returns without waiting.
    ///
    /// - Throws: `CancellationError` if the task is cancelled.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        lock.withLock {
            if currentInstant < deadline { currentInstant = deadline }
        }
        // Let other tasks run, as a real sleep would.
        await Task.yield()
        try Task.checkCancellation()
    }
}
