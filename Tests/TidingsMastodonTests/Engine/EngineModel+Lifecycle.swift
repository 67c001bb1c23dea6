import Foundation
import PeerSupport
import TidingsCore
import TidingsMastodon
import TidingsSandboxKit

/// Restarts, crashes and polling through the scheduler: the parts of a client schedule that replace the engine
/// or hand it to another driver.
extension EngineModel {
    /// A clean restart: the stream stops, a pending debounced marker post runs (or fails), the store closes.
    mutating func restart() async throws {
        await stream?.stop()
        stream = nil
        await clock.run()
        await closeStore()
        try await reopen("restart")
    }

    /// A crash with an action in the outbox: the next request fails (the server never saw it, or applied it
    /// and the answer was lost), the action stays pending, and the process dies before anything else runs —
    /// no debounced marker post, no clean stop. The reopened engine must replay the action exactly once.
    mutating func crashWithPendingAction(_ cached: [ServerID]) async throws {
        let fault: SandboxFaults.Action = Bool.random(using: &rng) ? .status(503) : .dropMidResponse
        faults.add(fault, times: 1)
        history.append("fault: \(fault) on the next request")
        try await performRandomAction(on: cached)
        try await crash(after: "pending action")
    }

    /// A crash at a random point of an operation in flight: its task runs for a random number of yields, then
    /// the store closes under it (a transaction either committed or never ran) and its task is cancelled.
    mutating func crashMidOperation(_ cached: [ServerID]) async throws {
        let engine = engine
        let kind = Int.random(in: 0..<3, using: &rng)
        let action = pick([MastodonAction.favourite, .unfavourite, .bookmark, .unbookmark, .reblog, .unreblog])!
        let id = pick(cached)
        let target = try await id.asyncMap { id in try await engine.status(id).flatMap { $0.reblog?.id } ?? id }
        let yields = Int.random(in: 0...60, using: &rng)
        let operation = Task { () async throws -> MastodonPendingAction? in
            switch kind {
            case 0:
                _ = try await engine.refresh()
            case 1:
                _ = try await engine.loadOlder()
            default:
                guard let id else { return nil }
                return try await engine.perform(action, on: id)
            }
            return nil
        }
        for _ in 0..<yields { await Task.yield() }
        await closeStore()
        operation.cancel()
        let result = await operation.result
        if kind == 2, let target {
            switch result {
            case .success(let pending?):
                // Written before the crash: the outbox has it, so the server must end up showing it.
                intents.record(action, on: target, pending: pending.id)
            case .success(nil), .failure:
                break  // nothing to do, or never written: what the reader asked before still stands
            }
        }
        let what = ["refresh", "load older", "\(action) \(id.map { "\($0)" } ?? "-")"][kind]
        try await crash(after: "\(what) in flight for \(yields) yields (\(resultSummary(result)))", closed: true)
    }

    private func resultSummary(_ result: Result<MastodonPendingAction?, any Error>) -> String {
        switch result {
        case .success(let pending?): "written as \(pending.id)"
        case .success(nil): "done"
        case .failure(let error): "ended by \(error)"
        }
    }

    /// The process dies: the socket goes with it, the store is closed where it stands, and nothing the old
    /// engine still has in flight can write to it.
    mutating func crash(after what: String, closed: Bool = false) async throws {
        await stream?.stop()
        stream = nil
        if !closed { await closeStore() }
        try await reopen("crash after \(what)")
    }

    /// Closes the store off the cooperative pool (closing waits for a transaction in flight to end).
    func closeStore() async {
        let database = store.database
        _ = try? await onDedicatedThread("model-close") { database.close() }
    }

    /// Opens the store again and starts a new engine on it that replays its outbox, as an app does on launch.
    mutating func reopen(_ what: String) async throws {
        let clock = clock
        store = MastodonTimelineStore(
            database: try await SQLiteDatabase.open(path: path, schema: MastodonTimelineSchema.schema),
            now: { EngineFixture.epoch.addingTimeInterval(Double(clock.now.offset.components.seconds)) })
        engine = MastodonAccountEngine(
            client: engine.client, store: store, capabilities: capabilities, clock: clock, pageLimit: engine.pageLimit)
        failedActions.watch(engine)
        history.append("\(what) (\(try await engine.pendingActions().count) pending)")
        await engine.replayOutbox()
    }

    /// Hands the engine to `MastodonPollScheduler` as its poll target for a few virtual minutes, in the
    /// foreground with Home visible or in the background, stepped deadline by deadline on the test clock.
    /// Skipped while the user stream runs: its sleepers on the clock are not the scheduler's to settle.
    mutating func pollThroughScheduler() async throws {
        guard stream == nil else { return }
        await clock.run()  // debounced marker posts, and any sleeper a crashed engine left behind
        let foreground = Bool.random(using: &rng)
        let minutes = Int64.random(in: 1...12, using: &rng)
        let scheduler = MastodonPollScheduler(clock: clock, random: { 0.5 })
        let key = "alice@model"
        await scheduler.appStateChanged(.foreground(foreground))
        await scheduler.appStateChanged(.activeAccount(key))
        await scheduler.appStateChanged(.visibleTimeline(foreground ? "home" : nil))
        await scheduler.addAccount(MastodonPollAccount(key: key, target: engine, capabilities: capabilities))
        guard let loop = await scheduler.pollLoop(for: key) else {
            failure = "the scheduler has no loop for \(key)"
            return
        }
        await PollLoopDriver.run([loop], clock: clock, until: clock.now.advanced(by: .seconds(minutes * 60)))
        await scheduler.shutdown()
        await PollLoopDriver.settle([loop], clock: clock)
        history.append("scheduler: \(minutes) min \(foreground ? "in the foreground" : "in the background")")
    }

    /// Ends the history: the change-stream readers stop, the store closes.
    mutating func finish() async {
        await stream?.stop()
        stream = nil
        failedActions.cancel()
        await closeStore()
    }
}

extension Optional {
    fileprivate func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let self else { return nil }
        return try await transform(self)
    }
}

/// What the reader asked for: per status the server acts on (a boost's boosted status) and per kind of action,
/// the state the last action asked for and the outbox row that carries it (nil when the cache already showed
/// it, with nothing pending).
struct EngineModelIntents {
    struct Intent {
        var value: Bool
        var pending: Int64?
    }

    var byStatus: [ServerID: [String: Intent]] = [:]

    static func kind(_ action: MastodonAction) -> (String, Bool)? {
        switch action {
        case .favourite: ("favourite", true)
        case .unfavourite: ("favourite", false)
        case .bookmark: ("bookmark", true)
        case .unbookmark: ("bookmark", false)
        case .reblog: ("reblog", true)
        case .unreblog: ("reblog", false)
        default: nil
        }
    }

    mutating func record(_ action: MastodonAction, on target: ServerID, pending: Int64?) {
        guard let (kind, value) = Self.kind(action) else { return }
        byStatus[target, default: [:]][kind] = Intent(value: value, pending: pending)
    }

    mutating func forget(_ action: MastodonAction, on target: ServerID) {
        guard let (kind, _) = Self.kind(action) else { return }
        byStatus[target]?[kind] = nil
    }
}

/// The actions the engines of one history reported failed, read from each engine's change stream.
final class EngineModelFailures: Sendable {
    private let failed = LockedState(Set<MastodonPendingAction>())
    private let missed = LockedState(false)
    private let readers = LockedState([Task<Void, Never>]())

    /// Starts reading `engine`'s changes (a buffer large enough that a history never lags it).
    func watch(_ engine: MastodonAccountEngine) {
        let subscription = engine.changes()
        let failed = failed
        let missed = missed
        let reader = Task {
            for await change in subscription {
                switch change {
                case .actionFailed(let pending, _): failed.withLock { _ = $0.insert(pending) }
                case .missed: missed.withLock { $0 = true }
                default: break
                }
            }
        }
        readers.withLock { $0.append(reader) }
    }

    /// Whether a reader fell behind and lost changes (then a failure may have gone unseen).
    var lagged: Bool { missed.withLock { $0 } }

    /// Whether the outbox row `id` was reported failed. The report was published before the row left the
    /// outbox, but its reader may not have run yet: it is given a bounded number of turns to catch up.
    func waitFor(id: Int64) async -> Bool {
        for attempt in 0..<2_000 {
            if failed.withLock({ $0.contains { $0.id == id } }) { return true }
            await PollLoopDriver.pause(after: attempt)
        }
        return false
    }

    func cancel() {
        for reader in readers.withLock({ $0 }) { reader.cancel() }
    }
}
