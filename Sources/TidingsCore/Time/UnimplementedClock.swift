import Foundation

/// An `UnimplementedClock` is a clock for flows that must never wait: any `sleep` fails.
///
/// Inject it where a test asserts that no delay happens (a cache hit, an immediate reply); a
/// sleep throws ``UnexpectedSleep`` naming how long the code tried to wait, instead of hanging.
public final class UnimplementedClock: Clock, @unchecked Sendable {
    /// The error every `sleep` throws.
    public struct UnexpectedSleep: Error, Sendable, Equatable, CustomStringConvertible {
        /// How long the caller tried to sleep.
        public var requested: Duration
        public var description: String { "UnimplementedClock: unexpected sleep of \(requested)" }
    }

    /// A point on the clock, which never moves.
    public typealias Instant = VirtualInstant

    private let lock = NSLock()
    private var attempts = 0

    /// Creates a clock at instant zero.
    public init() {}

    /// Always the origin: the clock never moves.
    public var now: Instant { Instant(offset: .zero) }

    /// The clock has no resolution limit.
    public var minimumResolution: Duration { .zero }

    /// How many times code tried to sleep.
    public var sleepAttempts: Int { lock.withLock { attempts } }

    /// Always throws.
    ///
    /// - Throws: ``UnexpectedSleep``, or `CancellationError` if the task is already cancelled.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        lock.withLock { attempts += 1 }
        throw UnexpectedSleep(requested: now.duration(to: deadline))
    }
}
