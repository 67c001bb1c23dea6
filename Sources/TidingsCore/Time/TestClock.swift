import Foundation

/// A `TestClock` is a virtual clock whose time moves only when a test says so.
///
/// Guarantees:
/// - `now` starts at zero and changes only through ``advance(by:)``, ``advance(to:)`` and ``run(maxSteps:)``.
/// - A sleeper wakes only when the clock is advanced to or past its deadline; sleepers are woken one at
///   a time in deadline order, ties in the order they began to sleep, and `now` equals each sleeper's
///   deadline when it wakes.
/// - Cancelling a sleeping task makes its `sleep` throw `CancellationError` at once, without advancing.
/// - `advance` waits after each wake-up until the woken task is running again, then yields so it can
///   go on (and perhaps sleep again) before the next sleeper wakes or `advance` returns.
///
/// For example:
///
/// ```swift
/// let clock = TestClock()
/// let task = Task { try await clock.sleep(for: .seconds(5)) }
/// await clock.advance(by: .seconds(5))      // the task wakes here
/// ```
public final class TestClock: Clock, Sendable {
    /// A point on the clock: virtual time since the clock was made.
    public typealias Instant = VirtualInstant

    private enum SleeperState {
        case starting
        case cancelledBeforeSuspending
        case waiting(deadline: Instant, order: UInt64, continuation: CheckedContinuation<Bool, any Error>)
    }

    // All state sits behind one lock: `sleep` is called from arbitrary tasks and threads.
    private struct State {
        var currentInstant = Instant(offset: .zero)
        var sleepers: [UInt64: SleeperState] = [:]
        var nextSleeperID: UInt64 = 0
        /// Sleepers resumed by `advance` whose task has not yet returned from `sleep`.
        var wakingSleepers = 0
    }
    private let state = LockedState(State())
    private let yieldsPerStep: Int

    /// Creates a clock at instant zero.
    ///
    /// - Parameter yieldsPerStep: How many times `advance` yields after each wake-up so the woken
    ///   task can run; raise it when a woken task hops through many actors before sleeping again.
    public init(yieldsPerStep: Int = 50) {
        self.yieldsPerStep = max(1, yieldsPerStep)
    }

    /// The current virtual time.
    public var now: Instant { state.withLock { locked in locked.currentInstant } }

    /// The clock has no resolution limit.
    public var minimumResolution: Duration { .zero }

    /// How many tasks are suspended in `sleep` right now.
    public var pendingSleepers: Int {
        state.withLock { locked in
            locked.sleepers.values.reduce(0) { count, state in
                if case .waiting = state { count + 1 } else { count }
            }
        }
    }

    /// Suspends until the clock is advanced to `deadline` or later; returns at once if it already is.
    ///
    /// - Throws: `CancellationError` if the task is cancelled before or while sleeping.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let id: UInt64 = state.withLock { locked in
            locked.nextSleeperID += 1
            locked.sleepers[locked.nextSleeperID] = .starting
            return locked.nextSleeperID
        }
        let wokenByAdvance = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Bool, any Error>) in
                enum Outcome { case suspend, wake, cancel }
                let outcome: Outcome = state.withLock { locked in
                    if case .cancelledBeforeSuspending = locked.sleepers[id] {
                        locked.sleepers[id] = nil
                        return .cancel
                    }
                    if deadline <= locked.currentInstant {
                        locked.sleepers[id] = nil
                        return .wake
                    }
                    locked.sleepers[id] = .waiting(deadline: deadline, order: id, continuation: continuation)
                    return .suspend
                }
                switch outcome {
                case .suspend: break
                case .wake: continuation.resume(returning: false)
                case .cancel: continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            let continuation: CheckedContinuation<Bool, any Error>? = state.withLock { locked in
                switch locked.sleepers[id] {
                case .starting:
                    locked.sleepers[id] = .cancelledBeforeSuspending
                    return nil
                case .waiting(_, _, let continuation):
                    locked.sleepers[id] = nil
                    return continuation
                case .cancelledBeforeSuspending, nil:
                    return nil
                }
            }
            continuation?.resume(throwing: CancellationError())
        }
        if wokenByAdvance {
            state.withLock { locked in locked.wakingSleepers -= 1 }
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
            continuation.resume(returning: true)
            await yieldUntilWokenTasksRun()
            await yieldToOtherTasks()
        }
        state.withLock { locked in
            if locked.currentInstant < target { locked.currentInstant = target }
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

    /// Advances from deadline to deadline until `task` has finished, then returns its result.
    ///
    /// Unlike ``run(maxSteps:)`` it never stops early because the task was briefly between two
    /// sleeps: while no one sleeps it yields and looks again. For example:
    ///
    /// ```swift
    /// let poll = Task { try await poller.pollThreeTimes() }
    /// let result = try await clock.run(until: poll)
    /// ```
    ///
    /// - Parameters:
    ///   - task: The task to drive; it runs to its end, or is cancelled when a bound is hit.
    ///   - maxSteps: A bound on deadlines advanced to; past it the task is cancelled.
    ///   - maxIdleYields: A bound on yields while no task sleeps (the task may be waiting on something
    ///     other than the clock); past it the task is cancelled.
    /// - Returns: The task's value.
    /// - Throws: The task's error (`CancellationError` when a bound was hit).
    @discardableResult
    public func run<Success: Sendable>(
        until task: Task<Success, any Error>, maxSteps: Int = 10_000, maxIdleYields: Int = 1_000_000
    ) async throws -> Success {
        let finished = FinishedFlag()
        let watcher = Task {
            _ = await task.result
            finished.set()
        }
        var steps = 0
        var idleYields = 0
        while !finished.isSet {
            if let deadline = earliestDeadline() {
                guard steps < maxSteps else { break }
                steps += 1
                idleYields = 0
                await advance(to: deadline)
            } else {
                guard idleYields < maxIdleYields else { break }
                idleYields += 1
                await Task.yield()
            }
        }
        if !finished.isSet { task.cancel() }
        await watcher.value
        return try await task.value
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

    /// The earliest deadline a task sleeps until, if any (for drivers that step deadline by deadline).
    package var earliestPendingDeadline: Instant? { earliestDeadline() }

    private func earliestDeadline() -> Instant? {
        state.withLock { locked in
            locked.sleepers.values.compactMap { state -> Instant? in
                if case .waiting(let deadline, _, _) = state { deadline } else { nil }
            }.min()
        }
    }

    private func takeEarliestSleeper(notAfter target: Instant) -> CheckedContinuation<Bool, any Error>? {
        state.withLock { locked in
            var best:
                (id: UInt64, deadline: Instant, order: UInt64, continuation: CheckedContinuation<Bool, any Error>)?
            for (id, state) in locked.sleepers {
                guard case .waiting(let deadline, let order, let continuation) = state, deadline <= target else {
                    continue
                }
                if let current = best, (current.deadline, current.order) < (deadline, order) { continue }
                best = (id, deadline, order, continuation)
            }
            guard let best else { return nil }
            locked.sleepers[best.id] = nil
            locked.wakingSleepers += 1
            if locked.currentInstant < best.deadline { locked.currentInstant = best.deadline }
            return best.continuation
        }
    }

    /// Yields until every task woken so far is running again (it has returned from `sleep`), so a
    /// busy thread pool cannot make `advance` outrun the tasks it woke. Bounded, in case a woken task
    /// is starved by something outside the clock.
    private func yieldUntilWokenTasksRun() async {
        for _ in 0..<100_000 {
            if state.withLock({ locked in locked.wakingSleepers == 0 }) { return }
            await Task.yield()
        }
    }

    private func yieldToOtherTasks() async {
        for _ in 0..<yieldsPerStep { await Task.yield() }
    }
}

/// A thread-safe one-way flag.
private final class FinishedFlag: Sendable {
    private struct State {
        var value = false
    }
    private let state = LockedState(State())
    var isSet: Bool { state.withLock { locked in locked.value } }
    func set() { state.withLock { locked in locked.value = true } }
}
