import Foundation
import TidingsCore
import TidingsMastodon
import TidingsSandboxKit

extension EngineModel {
    /// The device offline for a stretch. The app closes the stream and tells polling the path is gone; the
    /// sandbox refuses every connection (nothing reaches the server). Meanwhile the reader acts (the actions go
    /// pending), pulls to refresh (a transport error, nothing changes) and polling runs some virtual minutes,
    /// sending nothing. When the path returns, the outbox replays and the stream reopens, as `MastodonSync`
    /// does; quiescence then checks that nothing the reader did was lost.
    mutating func offlineStretch(_ cached: [ServerID]) async throws {
        let streaming = stream != nil
        await stream?.stop()
        await clock.run()  // the debounced marker post, before the path goes
        faults.clear()
        let refusals = 10_000
        faults.add(.close(code: 1001), times: refusals)
        func attempts() -> Int { refusals - (faults.faults.rules.first?.times ?? refusals) }
        history.append("offline\(streaming ? " (stream closed)" : "")")
        for _ in 0..<Int.random(in: 1...4, using: &rng) {
            switch Int.random(in: 0..<3, using: &rng) {
            case 0:
                do {
                    try await performRandomAction(on: cached)
                } catch let error as MastodonError where error == .transport {
                    history.append("  the action's send failed offline")
                }
            case 1:
                let before = try await engine.entries()
                do {
                    // It can only succeed by joining a refresh that went out before the path did (the stream's
                    // backfill or update refresh): one refresh per timeline in flight, a second caller joins.
                    try await engine.refresh()
                    history.append("  refresh: joined one in flight from before")
                } catch let error as MastodonError where error == .transport {
                    // Without a stream nothing else writes meanwhile; with one, a stream event read before the
                    // stop may still land.
                    if !streaming, try await engine.entries() != before {
                        failure = "a failed refresh changed the timeline"
                    }
                    history.append("  refresh: transport error, nothing changed")
                }
            default:
                // Polling's own calls are counted at the target: the engine's debounced marker post, woken by the
                // clock, may still reach the (refusing) network meanwhile, and is not polling's.
                let target = CountingPollTarget(engine)
                let minutes = Int64.random(in: 1...12, using: &rng)
                let scheduler = MastodonPollScheduler(clock: clock, random: { 0.5 })
                let key = "alice@model"
                await scheduler.appStateChanged(.networkPath(.offline))
                await scheduler.appStateChanged(.foreground(true))
                await scheduler.appStateChanged(.activeAccount(key))
                await scheduler.appStateChanged(.visibleTimeline("home"))
                await scheduler.addAccount(MastodonPollAccount(key: key, target: target, capabilities: capabilities))
                if let loop = await scheduler.pollLoop(for: key) {
                    await PollLoopDriver.run(
                        [loop], clock: clock, until: clock.now.advanced(by: .seconds(minutes * 60)))
                    await scheduler.shutdown()
                    await PollLoopDriver.settle([loop], clock: clock)
                }
                if target.calls.withLock({ $0 }) > 0 { failure = "polling asked the engine while offline" }
                history.append("  scheduler offline for \(minutes) min: nothing sent")
            }
            if failure != nil { return }
        }
        faults.clear()
        history.append("online again after \(attempts()) refused request(s): outbox replayed")
        await engine.replayOutbox()
        if streaming, let stream {
            await stream.resume()
            history.append("  stream reopened")
        }
    }
}

/// Forwards polling's calls to the engine and counts them.
struct CountingPollTarget: MastodonPollTarget {
    let engine: MastodonAccountEngine
    let calls = LockedState(0)

    init(_ engine: MastodonAccountEngine) { self.engine = engine }

    func pollUnreadCount() async throws -> Int {
        calls.withLock { $0 += 1 }
        return try await engine.pollUnreadCount()
    }

    func pollTimeline(_ timeline: String) async throws {
        calls.withLock { $0 += 1 }
        try await engine.pollTimeline(timeline)
    }

    func pollNotifications() async throws {
        calls.withLock { $0 += 1 }
        try await engine.pollNotifications()
    }

    func hasTimelineBacklog(_ timeline: String) async -> Bool { await engine.hasTimelineBacklog(timeline) }
}
