/// A `PollLoop` runs one account's polling: it decides *when* to tick; its owner's `tick` closure
/// decides *what* a tick requests. Any backend reuses it (Mastodon's policy is one owner).
///
/// Guarantees:
/// - Time is the injected clock's (``TestClock`` in tests); every wait is on it or on a state change.
/// - One tick at a time. ``requestTick()`` while a tick runs is coalesced: however many requests
///   arrive, one more tick follows.
/// - On ``PollSchedule/every(_:)`` a tick is due `interval` after the previous one began (the first
///   at once); the schedule is asked again on every wake, so a policy that depends on time (idleness)
///   or on state (pushed by ``reschedule()``) takes effect at once.
/// - A failed tick backs off exponentially with full jitter (``Backoff``), capped at
///   ``PollLoopConfiguration/backoffCap``; a failure never makes the next tick sooner than the schedule.
/// - After a 429 with `Retry-After`, nothing ticks before it ends (not even a requested tick); after a
///   429 without it, a backoff and the interval doubled for ``PollLoopConfiguration/penaltyDuration``.
/// - With a ``PollBudgetGate``, nothing ticks while the shared ``RateBudget`` holds the account or its
///   remaining requests are at the reserve before the server's reset.
/// - ``PollTickOutcome/needsReauthentication`` stops the loop until ``resume()``; an unsatisfied
///   network path stops it until ``setNetworkSatisfied(_:)`` says otherwise — on that update, never on
///   a timer.
/// - Cancelling the task running ``run()`` ends it promptly; a tick in flight is cancelled with it.
///
/// For example:
///
/// ```swift
/// let loop = PollLoop(clock: ContinuousClock(), schedule: { .every(.seconds(30)) }) {
///     do { try await poll(); return .success } catch { return .failed }
/// }
/// let task = Task { await loop.run() }
/// await loop.setNetworkSatisfied(false)   // the path went away: no tick until it returns
/// task.cancel()
/// ```
public actor PollLoop {
    /// What the loop is doing.
    public enum State: Sendable, Hashable {
        /// ``run()`` has not started.
        case notStarted
        /// A tick is in flight.
        case ticking
        /// Waiting, until an elapsed time of the clock or (nil) a change, for a reason.
        case waiting(until: Duration?, reason: PollLoopWait)
        /// ``run()`` ended (its task was cancelled).
        case finished
    }

    private enum Step {
        case tick
        case wait(until: Duration?, reason: PollLoopWait)
    }

    private let timeline: Timeline
    private let configuration: PollLoopConfiguration
    private let schedule: @Sendable () async -> PollSchedule
    private let tick: @Sendable () async -> PollTickOutcome
    private let gate: PollBudgetGate?
    private let broadcaster = ChangeBroadcaster<PollLoopEvent> { .missed($0) }
    private var backoff: Backoff

    private var lastTickStart: Duration?
    private var holdUntil: Duration = .zero
    private var halvedUntil: Duration = .zero
    private var networkSatisfied = true
    private var needsReauthentication = false
    private var requested = false
    private var pokes = 0
    private var pokeWaiter: CheckedContinuation<Void, Never>?
    private var armedAtPoke = -1
    /// What the loop is doing now.
    public private(set) var state: State = .notStarted
    /// How many ticks have started.
    public private(set) var tickCount = 0

    /// A loop that is not yet running (call ``run()`` from a task of its own).
    ///
    /// - Parameters:
    ///   - clock: Every wait goes through it.
    ///   - configuration: Backoff and penalty.
    ///   - gate: The shared rate budget to consult before each tick, if any.
    ///   - random: Jitter in `0..<1` for the backoff (inject it for reproducible schedules).
    ///   - schedule: The policy's schedule now; called on every wake.
    ///   - tick: One tick's work; runs in the loop's task, so cancelling the loop cancels it.
    public init(
        clock: any Clock<Duration>, configuration: PollLoopConfiguration = PollLoopConfiguration(),
        gate: PollBudgetGate? = nil, random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        schedule: @escaping @Sendable () async -> PollSchedule, tick: @escaping @Sendable () async -> PollTickOutcome
    ) {
        self.timeline = Timeline(clock)
        self.configuration = configuration
        self.gate = gate
        self.schedule = schedule
        self.tick = tick
        self.backoff = Backoff(base: configuration.backoffBase, cap: configuration.backoffCap, random: random)
    }

    /// A fresh stream of what the loop does from now on (bounded; a lagging reader gets `.missed`).
    public nonisolated func events() -> ChangeSubscription<PollLoopEvent> { broadcaster.subscribe() }

    /// Until when (elapsed on the loop's clock) a `Retry-After` or a backoff holds every tick.
    public var heldUntil: Duration { holdUntil }

    /// How long from now a `Retry-After` or a backoff still holds every tick (`.zero`: none).
    public var heldFor: Duration { max(.zero, holdUntil - timeline.elapsed) }

    /// Whether the interval is doubled after a 429 without `Retry-After`.
    public var isFrequencyHalved: Bool { timeline.elapsed < halvedUntil }

    /// Runs until the calling task is cancelled.
    public func run() async {
        while !Task.isCancelled {
            // A change told while the step was being decided (the schedule and the gate are awaited)
            // makes the decision stale: decide again rather than tick offline or sleep past it.
            let seen = pokes
            let step = await nextStep()
            if pokes != seen { continue }
            switch step {
            case .tick:
                await performTick()
            case .wait(let until, let reason):
                state = .waiting(until: until, reason: reason)
                armedAtPoke = seen
                broadcaster.publish(.waiting(until: until, reason: reason))
                await wait(until: until, seen: seen)
            }
        }
        state = .finished
    }

    /// Whether the loop waits and has seen every change told to it since (tests settle on this before
    /// moving a virtual clock, so a wait about to be replaced is not mistaken for the current one).
    package var isWaitingOnCurrentState: Bool {
        if case .waiting = state { return armedAtPoke == pokes }
        return false
    }

    /// Asks for a tick as soon as holds allow; coalesced with any other request and, while a tick
    /// runs, into one tick after it.
    public func requestTick() {
        requested = true
        poke()
    }

    /// Tells the loop the network path changed; unsatisfied stops ticking until it is satisfied again.
    public func setNetworkSatisfied(_ satisfied: Bool) {
        guard satisfied != networkSatisfied else { return }
        networkSatisfied = satisfied
        poke()
    }

    /// Restarts a loop stopped by ``PollTickOutcome/needsReauthentication`` (the account signed in again).
    public func resume() {
        guard needsReauthentication else { return }
        needsReauthentication = false
        backoff.reset()
        poke()
    }

    /// Tells the loop its schedule's inputs changed, so it asks ``PollSchedule`` again now.
    public func reschedule() { poke() }

    // MARK: - Steps

    private func nextStep() async -> Step {
        if needsReauthentication { return .wait(until: nil, reason: .needsReauthentication) }
        if !networkSatisfied { return .wait(until: nil, reason: .offline) }
        let current = await schedule()
        let now = timeline.elapsed
        var due: Duration? = requested ? now : nil
        if case .every(let interval) = current {
            let effective = now < halvedUntil ? interval * 2 : interval
            let scheduled = lastTickStart.map { $0 + effective } ?? now
            due = min(due ?? scheduled, scheduled)
        }
        guard var due else { return .wait(until: nil, reason: .onRequestOnly) }
        due = max(due, holdUntil)
        if due <= now, let gate {
            let pause = await gate.pause()
            if pause > .zero { due = timeline.elapsed + pause }
        }
        return due <= timeline.elapsed ? .tick : .wait(until: due, reason: .scheduled)
    }

    private func performTick() async {
        let start = timeline.elapsed
        requested = false
        lastTickStart = start
        tickCount += 1
        state = .ticking
        broadcaster.publish(.tickStarted(at: start))
        let outcome = await tick()
        let now = timeline.elapsed
        switch outcome {
        case .success:
            backoff.reset()
        case .failed:
            holdUntil = max(holdUntil, now + backoff.nextDelay())
        case .rateLimited(let retryAfter?):
            holdUntil = max(holdUntil, now + min(max(retryAfter, .zero), configuration.maximumRetryAfter))
        case .rateLimited(nil):
            holdUntil = max(holdUntil, now + backoff.nextDelay())
            halvedUntil = now + configuration.penaltyDuration
        case .needsReauthentication:
            needsReauthentication = true
        }
        broadcaster.publish(.tickFinished(at: now, outcome: outcome))
    }

    // MARK: - Waiting

    /// Returns at `deadline` (nil: never), on a change (`poke`), or when the task is cancelled.
    private func wait(until deadline: Duration?, seen: Int) async {
        await withTaskGroup(of: Void.self) { group in
            if let deadline {
                let timeline = timeline
                group.addTask { try? await timeline.sleep(until: deadline) }
            }
            group.addTask { await self.waitForPoke(after: seen) }
            _ = await group.next()
            group.cancelAll()
        }
    }

    private func poke() {
        pokes &+= 1
        pokeWaiter?.resume()
        pokeWaiter = nil
    }

    private func waitForPoke(after seen: Int) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                if pokes != seen || Task.isCancelled {
                    continuation.resume()
                } else {
                    pokeWaiter?.resume()
                    pokeWaiter = continuation
                }
            }
        } onCancel: {
            // The handler may run before the continuation is stored; the hop lands after it is.
            Task { await self.releasePokeWaiter() }
        }
    }

    private func releasePokeWaiter() {
        pokeWaiter?.resume()
        pokeWaiter = nil
    }
}
