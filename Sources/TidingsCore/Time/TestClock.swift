import Foundation

/// A `TestClock` is a virtual clock whose time moves only when a test says so.
///
/// Guarantees:
/// - `now` starts at zero and changes only through ``advance(by:)``, ``advance(to:)`` and ``run(maxSteps:)``.
/// - A sleeper wakes only when the clock is advanced to or past its deadline; sleepers are woken one at
///   a time in deadline order, ties in the order they began to sleep, and `now` equals each sleeper's
///   deadline when it wakes.
/// - Cancelling a sleeping task makes its `sleep` throw `CancellationError` at once, without advancing.
/// - `advance` yields between wake-ups so that woken tasks run (and may go back to sleep) before it returns.
///
/// For example:
///
/// ```swift
/// let clock = TestClock()
/// let task = Task { try await clock.sleep(for: .seconds(5)) }
/// await clock.advance(by: .seconds(5))      // the task wakes here
/// ```
public final class TestClock: Clock, @unchecked Sendable {
    /// A point on the clock: virtual time since the clock was made.
    public typealias Instant = VirtualInstant

    private enum SleeperState {
        case starting
        case cancelledBeforeSuspending
        case waiting(deadline: Instant, order: UInt64, continuation: CheckedContinuation<Void, any Error>)
    }

    // All state sits behind one lock: `sleep` is called from arbitrary tasks and threads.
    private let lock = NSLock()
    private var currentInstant = Instant(offset: .zero)
    private var sleepers: [UInt64: SleeperState] = [:]
    private var nextSleeperID: UInt64 = 0
    private let yieldsPerStep: Int

    /// Creates a clock at instant zero.
    ///
    /// - Parameter yieldsPerStep: How many times `advance` yields after each wake-up so the woken
    ///   task can run; raise it when a woken task hops through many actors before sleeping again.
    public init(yieldsPerStep: Int = 50) {
        self.yieldsPerStep = max(1, yieldsPerStep)
    }

    /// The current virtual time.
    public var now: Instant { lock.withLock { currentInstant } }

    /// The clock has no resolution limit.
    public var minimumResolution: Duration { .zero }

    /// How many tasks are suspended in `sleep` right now.
    public var pendingSleepers: Int {
        lock.withLock {
            sleepers.values.reduce(0) { count, state in
                if case .waiting = state { count + 1 } else { count }
            }
        }
    }

    /// Suspends until the clock is advanced to `deadline` or later; returns at once if it already is.
    ///
    /// - Throws: `CancellationError` if the task is cancelled before or while sleeping.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let id: UInt64 = lock.withLock {
            nextSleeperID += 1
            sleepers[nextSleeperID] = .starting
            return nextSleeperID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome { case suspend, wake, cancel }
                let outcome: Outcome = lock.withLock {
                    if case .cancelledBeforeSuspending = sleepers[id] {
                        sleepers[id] = nil
                        return .cancel
                    }
                    if deadline <= currentInstant {
                        sleepers[id] = nil
                        return .wake
                    }
                    sleepers[id] = .waiting(deadline: deadline, order: id, continuation: continuation)
                    return .suspend
                }
                switch outcome {
                case .suspend: break
                case .wake: continuation.resume()
                case .cancel: continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            let continuation: CheckedContinuation<Void, any Error>? = lock.withLock {
                switch sleepers[id] {
                case .starting:
                    sleepers[id] = .cancelledBeforeSuspending
                    return nil
                case .waiting(_, _, let continuation):
                    sleepers[id] = nil
                    return continuation
                case .cancelledBeforeSuspending, nil:
                    return nil
                }
            }
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward by `duration`, waking every sleeper whose deadline is passed, in order.
    ///
    /// A negative duration does nothing: virtual time never goes backwards.
    public func advance(by duration: Duration = .zero) async {
        await advance(to: now.advanced(by: duration))
    }

    /// Moves time forward to `target`, waking every sleeper whose deadline is at or before it, in
    /// deadline order. Sleepers that a woken task registers on the way wake too if their deadline is
    /// not after `target`.
    public func advance(to target: Instant) async {
        await yieldToOtherTasks()
        while let continuation = takeEarliestSleeper(notAfter: target) {
            continuation.resume()
            await yieldToOtherTasks()
        }
        lock.withLock {
            if currentInstant < target { currentInstant = target }
        }
    }

    /// Advances to each next deadline until no task sleeps on the clock any more.
    ///
    /// - Parameter maxSteps: A bound for schedules that never end (a poll loop sleeps forever);
    ///   `run` returns after that many deadlines even if sleepers remain.
    public func run(maxSteps: Int = 10_000) async {
        for _ in 0..<maxSteps {
            await yieldToOtherTasks()
            guard let deadline = earliestDeadline() else { return }
            await advance(to: deadline)
        }
    }

    /// Yields until at least `count` tasks sleep on the clock, so a test can advance knowing its task
    /// is already waiting.
    ///
    /// - Returns: Whether that many sleepers were seen within `maxYields` yields.
    @discardableResult
    public func waitForSleepers(_ count: Int = 1, maxYields: Int = 100_000) async -> Bool {
        for _ in 0..<maxYields {
            if pendingSleepers >= count { return true }
            await Task.yield()
        }
        return pendingSleepers >= count
    }

    private func earliestDeadline() -> Instant? {
        lock.withLock {
            sleepers.values.compactMap { state -> Instant? in
                if case .waiting(let deadline, _, _) = state { deadline } else { nil }
            }.min()
        }
    }

    private func takeEarliestSleeper(notAfter target: Instant) -> CheckedContinuation<Void, any Error>? {
        lock.withLock {
            var best:
                (id: UInt64, deadline: Instant, order: UInt64, continuation: CheckedContinuation<Void, any Error>)?
            for (id, state) in sleepers {
                guard case .waiting(let deadline, let order, let continuation) = state, deadline <= target else {
                    continue
                }
                if let current = best, (current.deadline, current.order) < (deadline, order) { continue }
                best = (id, deadline, order, continuation)
            }
            guard let best else { return nil }
            sleepers[best.id] = nil
            if currentInstant < best.deadline { currentInstant = best.deadline }
            return best.continuation
        }
    }

    private func yieldToOtherTasks() async {
        for _ in 0..<yieldsPerStep { await Task.yield() }
    }
}
