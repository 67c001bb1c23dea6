import Foundation
import TidingsCore
import TidingsMastodon
import TidingsPush

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How `watch` ended.
private enum MastodonWatchEnd: Sendable {
    case signal(Int32)
    case refused
}

/// `tidings mastodon watch`: keeps the account synced through `MastodonSync` as the active account in the
/// foreground with Home visible (the user stream where the server offers one, the polling table otherwise —
/// Home and notifications) and prints each change
/// until SIGINT or SIGTERM, then stops cleanly and exits 0. A token the server refuses ends it with 77.
func runMastodonWatch(_ options: MastodonSyncOptions) async throws {
    // Installed before anything is printed, so an early signal is never lost nor kills the process.
    let termination = TerminationSignal()
    let database = try await MastodonConnection.openStore(options.store)
    defer { database.close() }
    let store = MastodonTimelineStore(database: database)
    let connection = await MastodonConnection(options)
    let key = options.account
    let sync = MastodonSync(streamConnector: connection.streamConnector)
    await sync.appStateChanged(.activeAccount(key))
    // Watching is reading Home: without it on screen a tick polls no timeline, and a server without streaming
    // (Nextcloud Social) would never show a new post.
    await sync.appStateChanged(.visibleTimeline(MastodonTimelineKey.homeTimeline))
    // The scheduler's first tick may refresh home before `refresh()` below does (which then finds nothing
    // new): "new on home" is what this start stored, counted against the store as it was.
    let homeKey = MastodonTimelineKey(account: key, timeline: MastodonTimelineKey.homeTimeline)
    let cachedBefore = try await homeStatusCount(store, homeKey)
    let engine = await sync.addAccount(client: connection.client, store: store)
    let changes: ChangeSubscription<MastodonSyncChange>
    let notifications: MastodonWatchNotifications
    let events: ChangeSubscription<AccountNotificationEvent>
    do {
        try await engine.refresh()
        let newOnHome = max(0, try await homeStatusCount(store, homeKey) - cachedBefore)
        try await engine.pollNotifications()
        notifications = try await MastodonWatchNotifications.start(
            engine: engine, client: engine.client, store: options.store, mode: options.push)
        events = notifications.raiser.events()
        // Subscribed after the first sync, so its changes are summed up in the ready line, not replayed; and
        // before the stream's state is read, so a stream opening meanwhile is printed rather than lost.
        changes = sync.changes()
        let stream = await sync.streamState(for: key)
        emit(
            options.json,
            [
                "type": "ready", "target": connection.target, "account": key, "inserted": newOnHome,
                "stream": "\(stream)", "push": notifications.pushSummary,
            ]
        ) {
            "Watching \(key) on \(connection.target) (\(newOnHome) new on home, stream \(stream), push "
                + "\(notifications.pushSummary)); stop with Ctrl-C."
        }
        // What the first poll stored goes through the policy too; later polls are followed.
        await notifications.raiser.startFollowingPolls()
        // A streamed notification is decided when it arrives, not only at the stream's coalesced poll.
        await notifications.raiser.followStreamedNotifications(of: sync)
    } catch {
        await sync.shutdown()
        throw mastodonFailure(error, target: connection.target)
    }

    let (ends, endsContinuation) = AsyncStream.makeStream(of: MastodonWatchEnd.self)
    let printer = Task {
        for await change in changes {
            if case .engine(_, .needsReauthentication) = change {
                endsContinuation.yield(.refused)
                return
            }
            printChange(change, json: options.json)
        }
    }
    let notifier = Task {
        for await event in events { printNotificationEvent(event, json: options.json) }
    }
    _ = try? await notifications.raiser.raiseFromStore()
    let waiter = Task {
        endsContinuation.yield(.signal(await termination.wait()))
    }
    var end = MastodonWatchEnd.signal(SIGINT)
    for await first in ends {
        end = first
        break
    }
    printer.cancel()
    waiter.cancel()
    notifier.cancel()
    await notifications.stop()
    await sync.shutdown()
    switch end {
    case .refused:
        throw ToolFailure(ExitCode.noPermission, "\(connection.target) refused the token; stopped watching.")
    case .signal(let number):
        let name = number == SIGINT ? "SIGINT" : "SIGTERM"
        emit(options.json, ["type": "stopped", "signal": name]) { "Stopped on \(name)." }
    }
}

/// One line for `text`, or one JSON object.
private func emit(_ json: Bool, _ object: [String: Any], _ text: () -> String) {
    if json { JSONLines.emit(object) } else { print(text()) }
}

/// A change as one line; tokens never travel in changes, so none can be printed.
private func printChange(_ change: MastodonSyncChange, json: Bool) {
    let (kind, detail): (String, String)
    switch change {
    case .engine(_, let engineChange):
        switch engineChange {
        case .timeline(let key, let inserted): (kind, detail) = ("timeline", "\(key.timeline): \(inserted) new")
        case .deleted(let ids): (kind, detail) = ("deleted", ids.map(\.description).joined(separator: ", "))
        case .statusUpdated(let id): (kind, detail) = ("edited", id.description)
        case .notifications(let added): (kind, detail) = ("notifications", "\(added) new")
        case .unread(let count, let flag): (kind, detail) = ("unread", "\(count)\(flag ? " (unread)" : "")")
        case .marker(let timeline, let id): (kind, detail) = ("marker", "\(timeline) at \(id)")
        case .markersSaved(let home, let notifications):
            (kind, detail) = (
                "markersSaved", "home \(home?.description ?? "-"), notifications \(notifications?.description ?? "-")"
            )
        case .actionPending, .actionConfirmed, .actionFailed: (kind, detail) = ("action", "\(engineChange)")
        case .relationship(let id): (kind, detail) = ("relationship", id.description)
        case .needsReauthentication: (kind, detail) = ("needsReauthentication", "")
        case .filtersChanged: (kind, detail) = ("filtersChanged", "")
        case .missed(let count): (kind, detail) = ("missed", "\(count) changes")
        }
    case .stream(_, let state): (kind, detail) = ("stream", "\(state)")
    case .capabilities(_, let capabilities):
        (kind, detail) = ("capabilities", "\(capabilities.versionString), streaming \(capabilities.offersStreaming)")
    case .signedOut: (kind, detail) = ("signedOut", "")
    case .missed(let count): (kind, detail) = ("missed", "\(count) changes")
    }
    emit(json, ["type": "change", "kind": kind, "detail": detail]) { "\(kind): \(detail)" }
}

/// How many statuses (not gaps) `key`'s timeline holds in `store`.
private func homeStatusCount(_ store: MastodonTimelineStore, _ key: MastodonTimelineKey) async throws -> Int {
    try await store.entries(key).reduce(0) { count, entry in
        if case .status = entry.content { return count + 1 }
        return count
    }
}
