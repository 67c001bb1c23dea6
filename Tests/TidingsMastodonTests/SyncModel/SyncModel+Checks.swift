import Foundation
import TidingsCore
import TidingsMastodon

/// What must hold after every step and after quiescence.
extension SyncModel {
    /// After every step: no duplicate in the cached home, statuses in strictly descending `ServerID` order,
    /// the local markers never moved backwards (through crashes too: they are read from the store).
    mutating func checkAlways() async throws {
        let home = try await engine.entries().compactMap(\.statusID)
        if Set(home).count != home.count { failure = "duplicate in \(home)" }
        if home != home.sorted() { failure = "out of order: \(home)" }
        for timeline in MastodonMarkerTimeline.allCases {
            let now = try await engine.localMarker(timeline)
            if let before = lastMarkers[timeline], now.map({ $0 < before }) ?? true {
                failure = "\(timeline) marker moved back from \(before) to \(String(describing: now))"
            }
            lastMarkers[timeline] = now
        }
    }

    /// After quiescence: the cache is the server's view, the reader's actions are the server's state, the
    /// markers are saved, the notifications are stored.
    mutating func checkConverged() async throws {
        let pending = try await engine.pendingActions()
        if !pending.isEmpty {
            failure = "actions still pending after quiescence: \(pending)"
            return
        }
        // Idle and caught up: no poll may still be paging (a backlog that never clears polls on the table for
        // ever, and only moves cursors, which the idle measure does not see).
        let timelineBacklog = await engine.hasTimelineBacklog(MastodonTimelineKey.homeTimeline)
        let notificationBacklog = await engine.hasNotificationBacklog
        if timelineBacklog || notificationBacklog {
            failure = "a poll backlog remains after quiescence"
            return
        }
        try await checkHome()
        if failure != nil { return }
        try await checkIntents()
        if failure != nil { return }
        try await checkMarkers()
        if failure != nil { return }
        try await checkNotifications()
    }

    /// The cached home against the server's: within the feed the server keeps, every cached status is one
    /// the server shows (none deleted, none resurrected), the newest is cached, and between two cached
    /// statuses with no gap entry between them the server has nothing (no silent hole). Each cached status
    /// the server shows has the server's text.
    mutating func checkHome() async throws {
        // The server's truth is its home with nothing dropped after paging: which rows `filtersPages` drops
        // depends on where a page starts, so there no hole can be judged, only that nothing cached is deleted.
        // A status hidden by the keyword filter is never in a page: it counts as not there.
        let serverHome = try await serverHome(dropping: false).filter { status in
            variant.hiddenKeyword.map { !(status.reblog ?? status).content.contains($0) } ?? true
        }
        let judgeHoles = !variant.filtersPages
        let feed = serverHome.map(\.id)
        let feedSet = Set(feed)
        let entries = Array(try await engine.entries().reversed())  // newest first
        let describe = { () -> String in
            entries.map { $0.statusID.map { "\($0)" } ?? ($0.content == .gap(.open) ? "[gap]" : "[unfillable]") }
                .joined(separator: " ")
        }
        guard let oldestInFeed = feed.last else {
            if let stale = entries.compactMap(\.statusID).first {
                failure = "the server's home is empty, the cache holds \(stale): \(describe())"
            }
            return
        }
        let window = entries.filter { entry in entry.statusID.map { $0 >= oldestInFeed } ?? true }
        // The maintenance window re-checked the newest cached statuses: those must be the server's. Further down,
        // a deletion or an edit that no stream told may show late (polling asks only for newer statuses) — but a
        // status cached there and missing from the feed must at least be one the server deleted.
        let rechecked = Set(window.compactMap(\.statusID).prefix(MastodonMaintenancePolicy().recheckLimit))
        var stale: Set<ServerID> = []
        for id in window.compactMap(\.statusID) where !feedSet.contains(id) {
            let deleted: Bool
            do {
                _ = try await client("alice-token").status(id: id)
                deleted = false
            } catch let error as MastodonError where error == .notFound {
                deleted = true
            }
            guard deleted, !rechecked.contains(id) else {
                failure =
                    "\(id) is cached but not in the server's home (\(deleted ? "deleted" : "not deleted"), "
                    + "\(rechecked.contains(id) ? "" : "not ")re-checked): \(describe())"
                return
            }
            stale.insert(id)
        }
        let shown = window.filter { entry in entry.statusID.map { !stale.contains($0) } ?? true }
        if shown.first?.statusID != feed.first {
            failure = "the newest status \(feed[0]) is not on top of the cache: \(describe())"
            return
        }
        var newer: ServerID?
        for entry in shown {
            guard let id = entry.statusID else {
                newer = nil
                continue
            }
            if let newer, judgeHoles {
                let between = feed.filter { $0 < newer && $0 > id }
                if !between.isEmpty {
                    failure = "silent hole between \(newer) and \(id): the server has \(between); \(describe())"
                    return
                }
            }
            newer = id
        }
        let byID = Dictionary(serverHome.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for id in rechecked {
            guard let server = byID[id], let mine = try await engine.status(id) else { continue }
            if (mine.reblog ?? mine).content != (server.reblog ?? server).content {
                failure =
                    "\(id) was re-checked but has stale text \"\((mine.reblog ?? mine).content)\", the server's is "
                    + "\"\((server.reblog ?? server).content)\""
                return
            }
        }
        if !stale.isEmpty { history.append("shown late (deleted, below the re-checked ones): \(stale.sorted())") }
    }

    /// The server's home as alice sees it, newest first, paged by `Link` to the end; with `dropping` false,
    /// nothing is dropped after paging (the variant's `filtersPages` off while it is read).
    func serverHome(dropping: Bool) async throws -> [MastodonStatus] {
        var plain = variant
        plain.filtersPages = dropping && variant.filtersPages
        await server.setVariant(plain)
        var home: [MastodonStatus] = []
        var range: MastodonPageRange? = MastodonPageRange(limit: 40)
        while let current = range {
            let page = try await client("alice-token").homeTimeline(current)
            home += page.items
            range = page.older
        }
        await server.setVariant(variant)
        return home
    }

    /// Every action the reader took is what the server shows for each status still there, unless the engine
    /// reported that action failed.
    mutating func checkIntents() async throws {
        let alice = client("alice-token")
        var full = variant
        full.sparseFields = false
        await server.setVariant(full)
        var statuses: [ServerID: MastodonStatus] = [:]
        for target in intents.byStatus.keys { statuses[target] = try? await alice.status(id: target) }
        await server.setVariant(variant)
        for (target, kinds) in intents.byStatus {
            guard let status = statuses[target] else { continue }  // deleted since
            for (kind, intent) in kinds {
                let shown: Bool? =
                    switch kind {
                    case "favourite": status.favourited
                    case "bookmark": status.bookmarked
                    default: status.reblogged
                    }
                guard (shown ?? false) != intent.value else { continue }
                if let pending = intent.pending, await failedActions.waitFor(id: pending) { continue }
                if failedActions.lagged { continue }
                failure =
                    "\(kind) on \(target): the reader asked for \(intent.value) (outbox row "
                    + "\(intent.pending.map(String.init) ?? "none")), the server shows \(String(describing: shown))"
                return
            }
        }
    }

    /// The server has the local markers (posted by the debounce while the clock ran).
    mutating func checkMarkers() async throws {
        let markers = try await client("alice-token").markers()
        if let local = try await engine.localMarker(.home), markers.home?.lastReadID != local {
            failure = "server home marker \(String(describing: markers.home?.lastReadID)) ≠ local \(local)"
        }
        if let local = try await engine.localMarker(.notifications), markers.notifications?.lastReadID != local {
            failure =
                "server notifications marker \(String(describing: markers.notifications?.lastReadID)) ≠ local \(local)"
        }
    }

    /// The newest notifications the server shows are stored, and none is missing between the oldest stored
    /// and the newest.
    ///
    /// With `filtersPages` only the newest is judged, as for the home: which rows the server drops depends on
    /// where a page starts, and the engine pages upward along `Link` over each row once, so a row its page lost
    /// is one this check's page (the newest 40) may show — a client cannot fetch it without asking a range
    /// twice, and on a real server a filtered row is dropped from every page. The newest is on top of every
    /// page that reaches it and is never dropped: a poll that stops short of the top still fails.
    mutating func checkNotifications() async throws {
        let alice = client("alice-token")
        let judgeHoles = !variant.filtersPages
        let capabilities = try await engine.capabilities()
        if capabilities.supportsGroupedNotifications {
            let stored = Set(try await engine.notificationGroups().compactMap(\.group.mostRecentNotificationID))
            let newest = try await alice.groupedNotifications(MastodonPageRange(limit: 40)).results
                .notificationGroups.compactMap(\.mostRecentNotificationID)
            let expected =
                judgeHoles ? newest.filter { id in stored.min().map { id >= $0 } ?? true } : Array(newest.prefix(1))
            if !Set(expected).isSubset(of: stored) {
                failure =
                    "notification groups \(expected.filter { !stored.contains($0) }) not stored (newest stored "
                    + "\(String(describing: stored.max())), unread count \(String(describing: await engine.unreadNotificationCount)))"
            }
        } else {
            let stored = Set(try await engine.notifications().map(\.id))
            let newest = try await alice.notifications(MastodonPageRange(limit: 40)).items.map(\.id)
            let expected =
                judgeHoles ? newest.filter { id in stored.min().map { id >= $0 } ?? true } : Array(newest.prefix(1))
            if !Set(expected).isSubset(of: stored) {
                failure = "notifications \(expected.filter { !stored.contains($0) }) not stored"
            }
        }
    }
}
