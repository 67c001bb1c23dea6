import Foundation
import TidingsCore

@testable import TidingsMastodon

/// A `MastodonPollTarget` that records each call with the virtual time it began, answers an unread
/// count the test sets, fails calls the test scripts, and takes `latency` of virtual time per call.
actor RecordingPollTarget: MastodonPollTarget {
    enum Call: Sendable, Hashable, CustomStringConvertible {
        case unreadCount
        case timeline(String)
        case notifications

        var description: String {
            switch self {
            case .unreadCount: "unread"
            case .timeline(let name): "timeline:\(name)"
            case .notifications: "notifications"
            }
        }
    }

    let clock: TestClock
    private(set) var calls: [(call: Call, second: Double)] = []
    private(set) var cancelled = 0
    var unreadCount = 1
    var latency: Duration = .zero
    private var failures: [any Error] = []
    private var failEveryCall: (any Error)?

    init(clock: TestClock) { self.clock = clock }

    func setUnreadCount(_ count: Int) { unreadCount = count }
    func setLatency(_ latency: Duration) { self.latency = latency }
    /// The next calls fail with these errors, one each, in order.
    func failNext(_ errors: [any Error]) { failures += errors }
    /// Every call fails with this error (`nil`: none).
    func failAlways(_ error: (any Error)?) { failEveryCall = error }

    var names: [String] { calls.map(\.call.description) }

    func pollUnreadCount() async throws -> Int {
        try await record(.unreadCount)
        return unreadCount
    }

    func pollTimeline(_ timeline: String) async throws {
        try await record(.timeline(timeline))
        if let error = timelineFailure { throw error }
    }

    /// Every timeline poll fails with this error after it is recorded (`nil`: none).
    private var timelineFailure: (any Error)?
    func failTimelines(_ error: (any Error)?) { timelineFailure = error }

    func pollNotifications() async throws { try await record(.notifications) }

    /// What ``hasTimelineBacklog(_:)`` answers after each timeline poll (the test sets it).
    private var timelineBacklog = false
    func setTimelineBacklog(_ backlog: Bool) { timelineBacklog = backlog }
    func hasTimelineBacklog(_ timeline: String) async -> Bool {
        if let hook = onTimelineBacklogQuestion {
            onTimelineBacklogQuestion = nil
            await hook()
        }
        return timelineBacklog
    }

    /// Runs once, inside the next ``hasTimelineBacklog(_:)``, while the scheduler's tick waits for its answer.
    private var onTimelineBacklogQuestion: (@Sendable () async -> Void)?
    func whileAskedForTheTimelineBacklog(_ hook: @escaping @Sendable () async -> Void) {
        onTimelineBacklogQuestion = hook
    }

    private func record(_ call: Call) async throws {
        calls.append((call, clock.now.offset.inSeconds))
        if let error = failEveryCall { throw error }
        if !failures.isEmpty { throw failures.removeFirst() }
        if latency > .zero {
            do {
                try await clock.sleep(for: latency)
            } catch {
                cancelled += 1
                throw error
            }
        }
    }
}

extension Duration {
    var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}

/// Yields until `loop` waits again after its latest tick (a deadline in the future, already asleep on
/// the clock, or a wait for a change) and has started at least `ticks` ticks; returns its state. Bounded, so a bug fails instead
/// of hanging.
@discardableResult
func settle(_ loop: PollLoop, clock: TestClock, ticks: Int = 0) async -> PollLoop.State {
    for attempt in 0..<200_000 {
        let state = await loop.state
        let started = await loop.tickCount
        if started >= ticks, await loop.isWaitingOnCurrentState, case .waiting(let until, _) = state {
            if let until {
                if until > clock.now.offset, clock.pendingSleepers >= 1 { return state }
            } else {
                return state
            }
        }
        await PollLoopDriver.pause(after: attempt)
    }
    return await loop.state
}

/// Yields until `condition` holds (bounded).
func eventually(_ condition: @Sendable () async -> Bool) async -> Bool {
    for attempt in 0..<200_000 {
        if await condition() { return true }
        await PollLoopDriver.pause(after: attempt)
    }
    return await condition()
}

/// A scheduler over one recording target for the active account `a`, Home visible.
struct PollingFixture {
    let clock = TestClock()
    let target: RecordingPollTarget
    let scheduler: MastodonPollScheduler
    let loop: PollLoop

    init(
        settings: MastodonPollSettings = MastodonPollSettings(), visible: String? = "home",
        random: @escaping @Sendable () -> Double = { 0.5 }, authorization: MastodonAuthorization? = nil,
        push: MastodonPushRegistration = .none, path: MastodonNetworkPath = .wifi, settled: Bool = true,
        prepare: @Sendable (RecordingPollTarget) async -> Void = { _ in }
    ) async {
        let clock = clock
        target = RecordingPollTarget(clock: clock)
        await prepare(target)
        scheduler = MastodonPollScheduler(clock: clock, settings: settings, random: random)
        await scheduler.appStateChanged(.networkPath(path))
        await scheduler.appStateChanged(.activeAccount("a"))
        await scheduler.appStateChanged(.visibleTimeline(visible))
        await scheduler.addAccount(
            MastodonPollAccount(key: "a", target: target, push: push, authorization: authorization))
        loop = await scheduler.pollLoop(for: "a")!
        if settled { await settle(loop, clock: clock) }
    }

    /// Advances the clock by `seconds`, stopping at each of the loop's deadlines on the way until it has
    /// settled again (`TestClock.advance` only waits for a woken task to resume, not for the tick it
    /// then runs), and waits for the loop to settle at the end.
    func advance(_ seconds: Int64, ticks: Int = 0) async {
        let target = clock.now.advanced(by: .seconds(seconds))
        while true {
            let state = await settle(loop, clock: clock)
            guard case .waiting(let until?, _) = state, until <= target.offset else { break }
            await clock.advance(to: VirtualInstant(offset: until))
        }
        await clock.advance(to: target)
        await settle(loop, clock: clock, ticks: ticks)
    }

    /// The seconds at which ticks began (their unread-count calls).
    func tickSeconds() async -> [Double] {
        await target.calls.filter { $0.call == .unreadCount }.map(\.second)
    }
}
