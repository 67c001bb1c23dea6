import Foundation
import TidingsCore
import TidingsMastodon

/// Time passing on the virtual clock, and quiescence.
extension SyncModel {
    /// Moves the clock `seconds` on, deadline by deadline, letting what each deadline woke (the scheduler's
    /// ticks, the stream's pings, backoff and coalescing windows, debounced marker posts) run before the next.
    mutating func passTime(seconds: Int64) async throws {
        let limit = clock.now.advanced(by: .seconds(seconds))
        let before = log.entries.count
        var steps = 0
        while clock.now < limit, steps < 100_000 {
            steps += 1
            if Self.trace, steps % 1000 == 0 {
                print("trace \(seed): step \(steps) at \(clock.now), \(clock.pendingSleepers) sleepers")
            }
            await settle()
            if let deadline = clock.earliestPendingDeadline, deadline <= limit {
                await clock.advance(to: deadline)
            } else {
                await clock.advance(to: limit)
            }
        }
        await settle()
        history.append("\(seconds) s pass: \(log.entries.count - before) request(s)")
    }

    /// Waits until what the last clock move woke has run: the poll loops are waiting or asleep in a tick,
    /// and the clock's sleepers and the server's request log stay the same over several turns. (The stream's
    /// sleepers are not counted by the loops, so the exact count `PollLoopDriver.settle` waits for is not
    /// known here; a turn that runs something changes one of the two.)
    func settle() async {
        let loops = await sync.scheduler.pollLoop(for: Self.accountKey).map { [$0] } ?? []
        var stableTurns = 0
        var last: (Int, Int, Int)?
        for attempt in 0..<5_000 {
            let expected = await PollLoopDriver.sleepers(of: loops)
            let now = (clock.pendingSleepers, log.entries.count, activity.changes)
            if let expected, now.0 >= expected, let last, last == now {
                stableTurns += 1
                if stableTurns >= 12 { return }
            } else {
                stableTurns = 0
            }
            last = now
            await PollLoopDriver.pause(after: attempt)
        }
        if Self.trace {
            let states = await loops.asyncStates()
            print(
                "trace \(seed): not settled: \(states), \(clock.pendingSleepers) sleepers, \(String(describing: last))")
        }
    }

    /// What an app does to be up to date: it is online, in the foreground, with Home on screen (appearing if
    /// it was not), and time passes until sync has been idle for ``idleMinutes`` virtual minutes. Faults end
    /// (the server is healthy again); nothing else is asked of the engine.
    mutating func quiesce() async throws {
        history.append("— quiescence —")
        faults.clear()
        if !app.online { try await setOnline(true) }
        if !app.foreground {
            app.foreground = true
            await tell(.foreground(true))
        }
        if app.visible != MastodonTimelineKey.homeTimeline {
            app.visible = MastodonTimelineKey.homeTimeline
            await tell(.visibleTimeline(app.visible))
            let sync = sync
            _ = try? await driving {
                try await sync.timelineAppeared(MastodonTimelineKey.homeTimeline, account: Self.accountKey)
            }
        }
        try await untilIdle()
        if failure != nil { return }
        // The night: the app in the background an hour, then the platform's maintenance window (sweep and
        // deletion re-check), then the morning in the foreground again.
        app.foreground = false
        await tell(.foreground(false))
        try await passQuietly(seconds: 3600)
        let sync = sync
        let report = try await driving { try await sync.maintenance() }
        history.append("maintenance: re-checked \(report.rechecked), failed \(report.recheckFailed)")
        app.foreground = true
        await tell(.foreground(true))
        try await untilIdle()
    }

    /// Moves the clock a minute at a time until what the app shows has not changed for ``idleMinutes``.
    mutating func untilIdle() async throws {
        let start = clock.now
        var idleSince = clock.now
        var seen = try await fingerprint()
        while clock.now < start.advanced(by: .seconds(quiescenceLimit)) {
            try await passQuietly(seconds: 60)
            let now = try await fingerprint()
            if now != seen {
                if Self.trace { print("trace \(seed): changed: \(now)") }
                seen = now
                idleSince = clock.now
            } else if clock.now >= idleSince.advanced(by: .seconds(Self.idleMinutes * 60)) {
                let minutes = (clock.now.offset - start.offset).components.seconds / 60
                history.append("idle after \(minutes) virtual min (\(log.entries.count) requests in all)")
                return
            }
        }
        failure =
            "sync was not idle for \(Self.idleMinutes) min within \(quiescenceLimit / 3600) h; its last "
            + "changes: \(activity.last), the stream \(await sync.streamState(for: Self.accountKey))"
    }

    /// What the app shows: the home entries, the stored notifications, the pending actions and the markers.
    /// Sync is idle while none of it changes (a poll that brings nothing new leaves it as it was; its change
    /// reports are not read for this, as a refresh re-reports the status it anchors below).
    func fingerprint() async throws -> String {
        let entries = try await engine.entries().map { "\($0.position):\($0.statusID.map { "\($0)" } ?? "gap")" }
        let notifications = try await engine.notifications().count + engine.notificationGroups().count
        let pending = try await engine.pendingActions().count
        let markers = try await (engine.localMarker(.home), engine.localMarker(.notifications))
        return "\(entries) \(notifications) \(pending) \(String(describing: markers))"
    }

    /// ``passTime(seconds:)`` without a history line.
    private mutating func passQuietly(seconds: Int64) async throws {
        try await passTime(seconds: seconds)
        history.removeLast()
    }
}

extension [PollLoop] {
    fileprivate func asyncStates() async -> [String] {
        var states: [String] = []
        for loop in self { states.append("\(await loop.state) current \(await loop.isWaitingOnCurrentState)") }
        return states
    }
}

extension SyncModel {
    /// Runs `body` (an app call into sync) while the clock goes on from deadline to deadline: a call may wait
    /// on the clock inside (a marker post or a refresh waiting for a `Retry-After` or the rate budget), and an
    /// app's clock does not stop while it waits.
    func driving<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
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
            if let deadline = clock.earliestPendingDeadline {
                await clock.advance(to: deadline)
            } else {
                await PollLoopDriver.pause(after: attempt)
            }
        }
        await watcher.value
        return try await task.value
    }

    /// Tells sync an app event (``driving(_:)``).
    func tell(_ event: MastodonAppEvent) async {
        let sync = sync
        _ = try? await driving { await sync.appStateChanged(event) }
    }
}
