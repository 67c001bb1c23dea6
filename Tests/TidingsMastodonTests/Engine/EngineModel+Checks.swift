import Foundation
import TidingsCore
import TidingsMastodon

extension EngineModel {
    // MARK: Checks

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

    mutating func quiesce() async throws {
        if let stream {
            let triggered = await (stream.refreshesTriggered, stream.notificationPollsTriggered, stream.state)
            history.append("stream: \(triggered.0) refreshes, \(triggered.1) polls, \(triggered.2)")
        }
        await stream?.stop()
        stream = nil
        faults.clear()
        await clock.run()
        history.append("— quiescence —")
        for _ in 0..<MastodonAccountEngine.maximumActionAttempts where !(try await engine.pendingActions().isEmpty) {
            await engine.replayOutbox()
        }
        let cached = try await engine.entries().compactMap(\.statusID)
        try await engine.recheckCachedStatuses(cached, limit: cached.count)
        var syncs = 0
        while syncs < 400 {
            syncs += 1
            let entries = try await engine.entries()
            if let gap = entries.last(where: { $0.content == .gap(.open) }) {
                try await engine.loadGap(position: gap.position)
                continue
            }
            let result = try await engine.refresh()
            if result.inserted > 0 || result.gapInserted || result.cursorMoved { continue }
            if try await engine.loadOlder().reachedEnd { break }
        }
        // A status fetched before a deletion and re-checked afterwards must be gone again.
        let all = try await engine.entries().compactMap(\.statusID)
        try await engine.recheckCachedStatuses(all, limit: all.count)
        try await engine.syncMarkers()
        try await engine.enterBackground()
        for _ in 0..<100 {
            let before = try await engine.notifications().count + engine.notificationGroups().count
            try await engine.pollNotifications()
            if try await engine.notifications().count + engine.notificationGroups().count == before { break }
        }
    }

    mutating func checkConverged() async throws {
        let alice = client("alice-token")
        var serverHome: [MastodonStatus] = []
        var range: MastodonPageRange? = MastodonPageRange(limit: 40)
        while let current = range {
            let page = try await alice.homeTimeline(current)
            serverHome += page.items
            range = page.older
        }
        let cached = try await engine.entries()
        let feed = serverHome.map(\.id)
        // With a feed cap, statuses older than the feed may stay cached (fetched while they were in it): they
        // must still exist, and lie below an unfillable gap or the feed's end; what the feed holds must be
        // cached exactly, above any gap.
        let oldestInFeed = feed.last
        let cachedIDs = cached.compactMap(\.statusID).reversed().filter { id in oldestInFeed.map { id >= $0 } ?? false }
        let belowFeed = cached.compactMap(\.statusID).filter { id in oldestInFeed.map { id < $0 } ?? true }
        for (index, entry) in cached.enumerated() where entry.isGap {
            let above = cached[(index + 1)...].first { !$0.isGap }?.statusID
            let insideFeed = above.map { above in oldestInFeed.map { above > $0 } ?? true } ?? true
            if entry.content == .gap(.open) || insideFeed {
                failure = "a gap is left at \(entry.position) below \(String(describing: above)): \(cached)"
            }
        }
        if cachedIDs != feed {
            failure = "cache \(cachedIDs) ≠ server \(feed)"
            return
        }
        for id in belowFeed {
            if (try? await alice.status(id: id)) == nil { failure = "\(id), below the feed, is deleted or unreadable" }
        }
        if !belowFeed.isEmpty && !variantName.hasSuffix("cap") { failure = "cached below the end: \(belowFeed)" }
        for status in serverHome {
            guard let mine = try await engine.status(status.id) else {
                failure = "\(status.id) not readable"
                return
            }
            let inner = (mine.reblog ?? mine, status.reblog ?? status)
            // A field the server leaves out (sparse variants) is not compared here: checkIntents reads those.
            func differs(_ cached: Bool?, _ server: Bool?) -> Bool { server != nil && cached != server }
            if inner.0.content != inner.1.content || differs(inner.0.favourited, inner.1.favourited)
                || differs(inner.0.bookmarked, inner.1.bookmarked) || differs(inner.0.reblogged, inner.1.reblogged)
            {
                failure = "\(status.id) differs: cached \(mine) server \(status)"
                return
            }
        }
        try await checkIntents(alice)
        if failure != nil { return }
        let markers = try await alice.markers()
        if let local = try await engine.localMarker(.home), markers.home?.lastReadID != local {
            failure = "server home marker \(String(describing: markers.home?.lastReadID)) ≠ local \(local)"
        }
        let notifications = try await alice.notifications(MastodonPageRange(limit: 40)).items.map(\.id)
        if capabilities.supportsGroupedNotifications {
            let stored = Set(try await engine.notificationGroups().compactMap(\.group.mostRecentNotificationID))
            let newest = try await alice.groupedNotifications(MastodonPageRange(limit: 40)).results
                .notificationGroups.compactMap(\.mostRecentNotificationID)
            // Polls move forward from the newest stored; older ones are history the app pages to on request.
            let expected = newest.filter { id in stored.min().map { id >= $0 } ?? true }
            if !Set(expected).isSubset(of: stored) { failure = "groups \(newest) not all stored in \(stored)" }
        } else {
            let stored = Set(try await engine.notifications().map(\.id))
            let expected = notifications.filter { id in stored.min().map { id >= $0 } ?? true }
            if !Set(expected).isSubset(of: stored) { failure = "notifications \(notifications) not in \(stored)" }
        }
    }

    /// Every action the reader took is what the server shows for each status still there, unless the engine
    /// reported that action failed: an action in the outbox at a crash was replayed, none was lost or replayed
    /// behind its undo.
    mutating func checkIntents(_ alice: MastodonAPIClient) async throws {
        // A sparse variant (Pleroma) leaves the reader's state out of statuses: the server's truth is read
        // with the fields on, then the variant is put back.
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
}
