import Foundation
import PeerSupport
import TidingsCore
import TidingsMastodon
import TidingsSandboxKit

/// What the app does in a history: its state told to sync, the reader's actions, time passing.
extension SyncModel {
    mutating func appStep() async throws {
        if app.online, Int.random(in: 0..<8, using: &rng) == 0 {
            let fault: SandboxFaults.Action = Bool.random(using: &rng) ? .status(500) : .dropMidResponse
            faults.add(fault, times: 1)
            history.append("fault: \(fault) on the next request")
        }
        let cached = try await engine.entries().compactMap(\.statusID)
        switch Int.random(in: 0..<16, using: &rng) {
        case 0, 1, 2:
            try await passTime(seconds: Int64.random(in: 5...(Bool.random(using: &rng) ? 120 : 1800), using: &rng))
        case 3:
            app.foreground.toggle()
            await tell(.foreground(app.foreground))
            history.append(app.foreground ? "foreground" : "background")
        case 4:
            let next = pick([MastodonTimelineKey.homeTimeline, nil])!
            let appeared = next != nil && app.visible != next
            app.visible = next
            await tell(.visibleTimeline(next))
            var outcome = ""
            if appeared, let next {
                do {
                    let sync = sync
                    let refreshed = try await driving {
                        try await sync.timelineAppeared(next, account: Self.accountKey)
                    }
                    outcome = refreshed ? ": refreshed" : ""
                } catch {
                    outcome = ": \(error)"
                }
            }
            history.append("visible: \(next ?? "none")\(outcome)")
        case 5:
            try await setOnline(!app.online)
        case 6:
            app.lowPower.toggle()
            await tell(.lowPower(app.lowPower))
            history.append("low power \(app.lowPower ? "on" : "off")")
        case 7, 8:
            try await performRandomAction(on: cached)
        case 9:
            try await read(cached)
        case 10:
            try await scroll()
        case 11:
            http.closeInProcessConnections()
            history.append("the server drops the stream (\(await sync.streamState(for: Self.accountKey)))")
        case 12:
            try await crash(inFlight: nil, cached: cached)
        case 13:
            try await crash(inFlight: Int.random(in: 0..<2, using: &rng), cached: cached)
        case 14:
            guard !app.foreground else {
                await tell(.interaction)
                history.append("interaction")
                return
            }
            let sync = sync
            let report = try await driving { await sync.backgroundRefresh(budget: .seconds(25)) }
            history.append("background refresh: polled \(report.polled), failed \(report.failed)")
        default:
            let sync = sync
            let report = try await driving { try await sync.maintenance() }
            history.append("maintenance: re-checked \(report.rechecked), failed \(report.recheckFailed)")
        }
    }

    /// The network path goes (every connection is refused from now on) or comes back.
    mutating func setOnline(_ online: Bool) async throws {
        app.online = online
        if online {
            faults.clear()
            await tell(.networkPath(.wifi))
            history.append("network back")
        } else {
            await tell(.networkPath(.offline))
            faults.clear()
            faults.add(.close(code: 1001), times: 1_000_000)
            history.append("network lost")
        }
    }

    /// Favourites, bookmarks or boosts a cached status (or undoes it) and records what the reader asked for.
    mutating func performRandomAction(on cached: [ServerID]) async throws {
        guard let id = pick(cached) else { return }
        let action = pick([MastodonAction.favourite, .unfavourite, .bookmark, .unbookmark, .reblog, .unreblog])!
        let target = try await engine.status(id).flatMap { $0.reblog?.id } ?? id
        do {
            let engine = engine
            let pending = try await driving { try await engine.perform(action, on: id) }
            if let pending { intents.record(action, on: target, pending: pending.id) }
            history.append("\(action) \(id): \(pending.map { "sent as \($0.id)" } ?? "nothing to do")")
        } catch let error as MastodonError {
            // The send failed (offline, a fault): the action stays pending in the outbox.
            let pending = try await engine.pendingActions().last { $0.target == id && $0.action == action }
            if let pending { intents.record(action, on: target, pending: pending.id) }
            history.append("\(action) \(id): \(error), \(pending.map { "pending as \($0.id)" } ?? "not pending")")
        }
    }

    /// The reader reads down to a cached status (any: reading back up must not move a marker backwards) and,
    /// sometimes, the notifications.
    mutating func read(_ cached: [ServerID]) async throws {
        guard let id = pick(cached) else { return }
        let moved = try await engine.markRead(.home, upTo: id)
        var line = "read home up to \(id)\(moved ? "" : " (not past the marker)")"
        if let newest = try await engine.notifications().first?.id, Bool.random(using: &rng) {
            _ = try await engine.markRead(.notifications, upTo: newest)
            line += ", notifications up to \(newest)"
        }
        history.append(line)
    }

    /// The reader scrolls: into the newest open gap, or past the oldest cached status.
    mutating func scroll() async throws {
        let entries = try await engine.entries()
        do {
            if let gap = entries.last(where: { $0.content == .gap(.open) }), Bool.random(using: &rng) {
                let result = try await engine.loadGap(position: gap.position)
                history.append("scroll into the gap at \(gap.position): \(result.inserted) loaded")
            } else {
                let result = try await engine.loadOlder()
                history.append("scroll to the end: \(result.inserted) older loaded")
            }
        } catch let error as MastodonError {
            history.append("scroll: \(error)")
        } catch let error as MastodonTimelineError {
            // The stream or a tick moved the gap meanwhile.
            history.append("scroll: \(error)")
        }
    }

    /// The process dies — as it stands, or `inFlight` (0: a refresh of Home, 1: an action) after a random
    /// number of turns — and the app is launched again on the same store file.
    mutating func crash(inFlight: Int?, cached: [ServerID]) async throws {
        var what = "crash"
        // An action whose send failed under the crash: written to the outbox or not, the relaunch tells.
        var pendingAfterCrash: (MastodonAction, ServerID, ServerID)?
        if let inFlight {
            let engine = engine
            let action = pick([MastodonAction.favourite, .unfavourite, .bookmark, .unbookmark, .reblog, .unreblog])!
            let id = pick(cached)
            let target = try await id.asyncMap { id in try await engine.status(id).flatMap { $0.reblog?.id } ?? id }
            let yields = Int.random(in: 0...60, using: &rng)
            let operation = Task { () async throws -> MastodonPendingAction? in
                if inFlight == 0 {
                    _ = try await engine.refresh()
                    return nil
                }
                guard let id else { return nil }
                return try await engine.perform(action, on: id)
            }
            for _ in 0..<yields { await Task.yield() }
            await closeStore()
            operation.cancel()
            let result = await operation.result
            if inFlight == 1, let target, case .success(let pending?) = result {
                intents.record(action, on: target, pending: pending.id)
            } else if inFlight == 1, let target, let id, case .failure = result {
                pendingAfterCrash = (action, id, target)
            }
            what +=
                " with \(inFlight == 0 ? "a refresh" : "\(action) \(id.map { "\($0)" } ?? "-")") in flight "
                + "for \(yields) turns"
        } else {
            await closeStore()
        }
        await sync.shutdown()
        let clock = clock
        store = MastodonTimelineStore(
            database: try await SQLiteDatabase.open(path: path, schema: MastodonTimelineSchema.schema), now: now)
        if let (action, id, target) = pendingAfterCrash {
            let reader = MastodonAccountEngine(client: engine.client, store: store, clock: clock, pageLimit: pageLimit)
            if let row = try await reader.pendingActions().last(where: { $0.target == id && $0.action == action }) {
                intents.record(action, on: target, pending: row.id)
            }
        }
        let (http, store, pageLimit, app, activity) = (http, store, pageLimit, app, activity)
        (sync, engine) = try await driving {
            await Self.launch(
                clock: clock, http: http, store: store, pageLimit: pageLimit, app: app, activity: activity)
        }
        failedActions.watch(engine)
        history.append("\(what); relaunched (\(try await engine.pendingActions().count) pending)")
    }

    /// Closes the store off the cooperative pool (closing waits for a transaction in flight to end).
    func closeStore() async {
        let database = store.database
        _ = try? await onDedicatedThread("model-close") { database.close() }
    }

    /// Ends the history: sync stops, the change readers stop, the store closes.
    mutating func finish() async {
        await sync.shutdown()
        activity.cancel()
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
