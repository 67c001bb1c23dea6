import Foundation

/// An `UnimplementedClock` is a clock for flows that must never wait: any `sleep` fails.
///
/// Inject it where a test asserts that no delay happens (a cache hit, an immediate reply); a
/// sleep throws ``UnexpectedSleep`` naming how long the code tried to wait, instead of hanging.
public final class UnimplementedClock: Clock, Sendable {
    /// The error every `sleep` throws.
    ///
    /// It has one kind, ``unexpectedSleep``; errors compare by kind, so check ``requested`` for the length.
    public struct UnexpectedSleep: TidingsError {
        enum Code: String, Sendable { case unexpectedSleep }

        /// How long the caller tried to sleep.
        public let requested: Duration

        init(requested: Duration) { self.requested = requested }

        /// The kind of failure: always ``unexpectedSleep``.
        public var kind: TidingsErrorKind { TidingsErrorKind(Code.unexpectedSleep) }

        /// Code tried to sleep on a clock where no flow may wait.
        public static let unexpectedSleep = UnexpectedSleep(requested: .zero)

        /// The length of the attempted sleep.
        public var description: String { "UnimplementedClock: unexpected sleep of \(requested)" }
    }

    /// A point on the clock, which never moves.
    public typealias Instant = VirtualInstant

    private let attempts = LockedState(0)

    /// Creates a clock at instant zero.
    public init() {}

    /// Always the origin: the clock never moves.
    public var now: Instant { Instant(offset: .zero) }

    /// The clock has no resolution limit.
    public var minimumResolution: Duration { .zero }

    /// How many times code tried to sleep.
    public var sleepAttempts: Int { attempts.withLock { $0 } }

    /// Always throws.
    ///
    /// - Throws: ``UnexpectedSleep``, or `CancellationError` if the task is already cancelled.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        attempts.withLock { $0 += 1 }
        throw UnexpectedSleep(requested: now.duration(to: deadline))
    }
}
