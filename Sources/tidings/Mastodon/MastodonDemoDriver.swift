import Foundation
import TidingsCore
import TidingsMastodon

/// Moves the demo's virtual day on: deadline by deadline, letting what each deadline woke (the scheduler's
/// ticks, the stream's coalescing windows, marker debounces, backoffs) run to rest before the clock moves
/// again, with held requests let through one at a time (``MastodonDemoTurnstile``). Counts the requests of
/// each hour at the transport.
final class MastodonDemoDriver {
    /// The day's clock (00:00 at its zero).
    let clock: TestClock
    /// The sync object the app drives.
    let sync: MastodonSync
    /// The one account's key.
    let key: String
    private let turnstile: MastodonDemoTurnstile
    private let counter: MastodonCountingTransport
    private let streamWatch: MastodonDemoStreamWatch
    private let activity = LockedState(0)
    private var listener: Task<Void, Never>?
    /// Requests sent in each hour of the day so far.
    private(set) var perHour = [Int](repeating: 0, count: 24)
    private var hour = 0
    private var hourStart = 0
    /// Called after every step with the clock at rest (the demo prints the tier when it changes).
    var afterStep: (() async -> Void)?

    /// Turns with nothing changing before the system counts as at rest. Each turn also waits for the
    /// scheduler, the account's engine, the sync object and the stream to finish what they are doing.
    private static let restTurns = 16

    init(
        clock: TestClock, sync: MastodonSync, key: String, turnstile: MastodonDemoTurnstile,
        counter: MastodonCountingTransport, streamWatch: MastodonDemoStreamWatch
    ) {
        self.streamWatch = streamWatch
        self.clock = clock
        self.sync = sync
        self.key = key
        self.turnstile = turnstile
        self.counter = counter
        let changes = sync.changes()
        let activity = activity
        listener = Task { for await _ in changes { activity.withLock { $0 += 1 } } }
    }

    /// Requests sent so far.
    var requests: Int { counter.snapshot.requests }

    /// The virtual time of day, `HH:MM`.
    var time: String {
        let seconds = Int(clock.now.offset.components.seconds)
        return String(format: "%02d:%02d", seconds / 3600, (seconds / 60) % 60)
    }

    /// Lets held requests through one by one, each once everything else is at rest.
    func settle() async {
        repeat { await rest() } while turnstile.releaseNext()
    }

    /// Waits until nothing moves: no answer in flight; the poll loop not ticking, nor the stream connecting or
    /// reading a message, unless they wait on a held request or on the clock; the same sleepers, held requests,
    /// request count, changes and stream messages over ``restTurns`` turns; and a real-time grace after the
    /// latest answer (its caller decodes and stores it on another thread, where nothing here can see it; see
    /// ``MastodonDemoTurnstile/quietAfter``).
    private func rest() async {
        var stable = 0
        var last: [Int] = []
        var attempt = 0
        while attempt < 1_000_000 {
            attempt += 1
            let loop = await sync.scheduler.pollLoop(for: key)
            let ticking = await loop?.state == .ticking
            // A loop the clock woke still reads as waiting until it runs: it must be asleep again (or ticking).
            let expected = await PollLoopDriver.sleepers(of: loop.map { [$0] } ?? [])
            let decided = expected.map { ticking || clock.pendingSleepers >= $0 } ?? false
            _ = await sync.engine(for: key)?.markerPostCount
            var streaming = streamWatch.snapshot
            if case .connecting = await sync.streamState(for: key) { streaming.busy = true }
            let held = turnstile.snapshot
            // Ticking or connecting counts as waiting only on a held request or on a sleeper beyond the loop's.
            let waitsOnSomething = held.waiting > 0 || clock.pendingSleepers > (ticking ? 0 : expected ?? 0)
            let now = [
                clock.pendingSleepers, held.waiting, held.inFlight, requests, activity.withLock { $0 },
                streaming.delivered,
            ]
            let quiet =
                decided && held.inFlight == 0 && now == last && (!ticking || waitsOnSomething)
                && (!streaming.busy || waitsOnSomething)
            stable = quiet ? stable + 1 : 0
            last = now
            if stable >= Self.restTurns, ContinuousClock.now >= turnstile.quietAfter { return }
            await PollLoopDriver.pause(after: stable >= Self.restTurns || attempt > 256 ? 64 : 0)
        }
    }

    /// Messages the user stream has read so far.
    var streamMessages: Int { streamWatch.snapshot.delivered }

    /// The clock's sleepers now (for ``awaitStream(_:since:windows:)``).
    var sleepers: Int { clock.pendingSleepers }

    /// Waits (in real time, the clock standing still) until the stream has read `count` messages since it had
    /// read `start`, and `windows` more coalescing windows than `since.sleepers` sleep on the clock: what the
    /// server sends travels to the connection on a task of its own, and a window starts on another, both out of
    /// sight. Gives up after ten seconds, so a message that never comes costs those, not the demo.
    func awaitStream(_ count: Int, since start: (messages: Int, sleepers: Int), windows: Int) async {
        await waitUntil {
            streamMessages >= start.messages + count && clock.pendingSleepers >= start.sleepers + windows
        }
    }

    /// Waits (in real time, the clock standing still) until the transport has counted `count` requests in all:
    /// a request its caller already counted (the engine's marker post) reaches the transport on a task of its
    /// own, out of sight of ``settle()``. Gives up after ten seconds, so a request that never comes costs those.
    func awaitRequests(_ count: Int) async {
        await waitUntil { requests >= count }
    }

    /// Lets other tasks run, the clock standing still, until `condition` holds or ten seconds of real time passed
    /// (in a quiet run each wait ends within milliseconds; one second was once too short on a loaded machine):
    /// what the demo waits for here happens on tasks out of its sight, and may never happen.
    private func waitUntil(_ condition: () -> Bool) async {
        let deadline = ContinuousClock.now + .seconds(10)
        var attempt = 0
        while !condition(), ContinuousClock.now < deadline {
            attempt += 1
            await PollLoopDriver.pause(after: attempt)
        }
    }

    /// Moves the clock to `hours:minutes` of the day, deadline by deadline.
    func pass(to hours: Int, _ minutes: Int = 0, _ seconds: Int = 0) async {
        let limit = VirtualInstant(offset: .seconds(hours * 3600 + minutes * 60 + seconds))
        while clock.now < limit {
            await settle()
            await afterStep?()
            let next = min(clock.earliestPendingDeadline ?? limit, limit)
            closeHours(before: next)
            await clock.advance(to: next)
        }
        await settle()
        await afterStep?()
    }

    /// Runs an app call into sync while the clock goes on from deadline to deadline (a call may wait on the
    /// clock inside it: a rate budget, a `Retry-After`, the background refresh's budget).
    func drive<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let task = Task { try await body() }
        let done = LockedState(false)
        let watcher = Task {
            _ = await task.result
            done.withLock { $0 = true }
        }
        var attempt = 0
        while !done.withLock({ $0 }) {
            attempt += 1
            await settle()
            if done.withLock({ $0 }) { break }
            // Not done and at rest: it waits on the clock (rare: a rate budget's hold), or it is still working out
            // of sight; up to 250 ms of real time to finish or to send a request before the clock moves for it.
            let sent = requests
            let patience = ContinuousClock.now + .milliseconds(250)
            var waited = 0
            while !done.withLock({ $0 }), turnstile.snapshot.waiting == 0, requests == sent,
                ContinuousClock.now < patience
            {
                waited += 1
                await PollLoopDriver.pause(after: waited)
            }
            if done.withLock({ $0 }) || turnstile.snapshot.waiting > 0 || requests != sent { continue }
            if let deadline = clock.earliestPendingDeadline {
                closeHours(before: deadline)
                await clock.advance(to: deadline)
            } else {
                await PollLoopDriver.pause(after: attempt)
            }
        }
        await watcher.value
        await settle()
        return try await task.value
    }

    /// Tells sync what the app did, and lets what that started run to rest.
    func tell(_ events: MastodonAppEvent...) async {
        for event in events {
            let sync = sync
            _ = try? await drive { await sync.appStateChanged(event) }
        }
        await afterStep?()
    }

    /// Closes the hours that end at or before `next` (requests sent so far happened before it).
    private func closeHours(before next: VirtualInstant) {
        while hour < 24, next.offset >= .seconds((hour + 1) * 3600) {
            perHour[hour] = requests - hourStart
            hourStart = requests
            hour += 1
        }
    }

    /// Ends the day: the last hours closed, polling and the stream stopped, nothing left held.
    func finish() async {
        closeHours(before: VirtualInstant(offset: .seconds(24 * 3600)))
        await sync.shutdown()
        turnstile.openForGood()
        listener?.cancel()
    }
}
