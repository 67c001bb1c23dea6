import Foundation
import TidingsCore

/// What the engine knows of the account's markers beyond the durable local ones.
struct MarkerState {
    /// The largest value the server is known to hold per timeline (from GET, POST answers and 409 refetches).
    var server: [MastodonMarkerTimeline: ServerID] = [:]
    /// Whether the server's markers were read since launch: nothing is posted before, so a post can never
    /// go below a value another device saved.
    var fetched = false
    /// The debounced post waiting on the clock.
    var pendingPost: Task<Void, Never>?
    /// How many `POST /api/v1/markers` were sent (for tests and metrics).
    var posts = 0
    /// Whether the network path is satisfied (as the app last said): no post goes out while it is not.
    var online = true
    /// A post came due while offline: it goes out once when the path returns.
    var waitingForPath = false
    /// The post being sent: a second caller waits for it, then posts only what is still ahead.
    var postInFlight: Task<Void, any Error>?
}

/// Read markers: fetched on launch and foreground, posted when reading moves past unread content (at most
/// once per ``markerPostInterval`` on the engine's clock, and at once on background), merged as the
/// maximum in `ServerID` order on this device and against the server.
extension MastodonAccountEngine {
    /// The shortest time between two debounced marker posts.
    public static let markerPostInterval: Duration = .seconds(10)

    func markerKey(_ timeline: MastodonMarkerTimeline) -> String { "mastodon.\(account).\(timeline.rawValue).read" }

    /// This device's marker of `timeline` (never behind any value it has seen), or nil before the first one.
    public func localMarker(_ timeline: MastodonMarkerTimeline) throws -> ServerID? {
        try markerStorage.loadMarker(key: markerKey(timeline))
    }

    /// How many `POST /api/v1/markers` the engine sent.
    public var markerPostCount: Int { markerState.posts }

    /// Whether the server's markers were read since launch (``syncMarkers()`` succeeded once).
    var serverMarkersRead: Bool { markerState.fetched }

    /// `GET /api/v1/markers?timeline[]=home&timeline[]=notifications` (on launch and on foreground): merges the
    /// server's markers into this device's as the maximum, then posts what this device has read beyond them.
    ///
    /// - Throws: ``MastodonError``; the local markers never move backwards whatever fails.
    public func syncMarkers() async throws {
        let server = try await guarded { try await self.client.markers() }
        try mergeServerMarkers(server)
        markerState.fetched = true
        try await postMarkersIfAhead()
    }

    /// Records that the reader has read `timeline` up to `id`. The marker moves only forward; when it moves
    /// past what the server has, a post is scheduled (at most one per ``markerPostInterval``).
    ///
    /// - Returns: Whether the marker moved.
    /// - Throws: a store error.
    @discardableResult
    public func markRead(_ timeline: MastodonMarkerTimeline, upTo id: ServerID) throws -> Bool {
        guard try advanceLocalMarker(timeline, to: id) else { return false }
        if timeline == .notifications { try updateUnread(count: nil) }
        if markerState.server[timeline].map({ id > $0 }) ?? true { scheduleMarkerPost() }
        return true
    }

    /// The app went to the background: the pending post (if any) is sent now rather than after the debounce
    /// (offline: when the path returns).
    ///
    /// - Throws: ``MastodonError`` from the post.
    public func enterBackground() async throws {
        markerState.pendingPost?.cancel()
        markerState.pendingPost = nil
        guard markerState.online else {
            // Offline: the post waits for the path (``setNetworkSatisfied(_:)``) rather than fail.
            if try markerAhead(.home) != nil || markerAhead(.notifications) != nil { markerState.waitingForPath = true }
            return
        }
        try await postMarkersIfAhead()
    }

    /// How many cached home statuses are newer than the home marker ("N new posts"); every cached one
    /// before the first marker.
    public func unreadPostCount() throws -> Int {
        let marker = try localMarker(.home)
        return try entries(MastodonTimelineKey.homeTimeline).filter { entry in
            guard let id = entry.statusID else { return false }
            return marker.map { id > $0 } ?? true
        }.count
    }

    func advanceLocalMarker(_ timeline: MastodonMarkerTimeline, to id: ServerID) throws -> Bool {
        let key = markerKey(timeline)
        let before = try markerStorage.loadMarker(key: key)
        if let before, id <= before { return false }
        let stored = try markerStorage.saveMarkerKeepingMaximum(id, key: key)
        guard stored != before else { return false }
        broadcaster.publish(.marker(timeline, stored))
        return true
    }

    func mergeServerMarkers(_ markers: MastodonMarkers) throws {
        for (timeline, marker) in [
            (MastodonMarkerTimeline.home, markers.home), (.notifications, markers.notifications),
        ] {
            guard let id = marker?.lastReadID else { continue }
            if markerState.server[timeline].map({ id > $0 }) ?? true { markerState.server[timeline] = id }
            if try advanceLocalMarker(timeline, to: id), timeline == .notifications { try updateUnread(count: nil) }
        }
    }

    func scheduleMarkerPost() {
        guard markerState.pendingPost == nil else { return }
        let clock = clock
        markerState.pendingPost = Task {
            do { try await clock.sleep(for: Self.markerPostInterval) } catch { return }
            await self.firePendingMarkerPost()
        }
    }

    /// Whether a marker post came due while the network path was unsatisfied and waits for it to return.
    public var markerPostWaitsForPath: Bool { markerState.waitingForPath }

    /// The app's network path changed (``MastodonSync`` tells every engine at once). While it is unsatisfied no
    /// marker post goes out: one that comes due waits for ``postWaitingMarkers()``. Sends nothing itself.
    public func setNetworkSatisfied(_ satisfied: Bool) {
        markerState.online = satisfied
    }

    /// The path is back: a marker post that came due while offline goes out once, of the markers read beyond
    /// the server's by now (the maximum, never below the server's). Nothing when none waits or still offline.
    public func postWaitingMarkers() async {
        guard markerState.online, markerState.waitingForPath else { return }
        markerState.waitingForPath = false
        // A failure leaves the local marker ahead; the next read, foreground or background posts it.
        try? await postMarkersIfAhead()
    }

    func firePendingMarkerPost() async {
        markerState.pendingPost = nil
        guard markerState.online else {
            markerState.waitingForPath = true
            return
        }
        // A failure leaves the local marker ahead; the next read, foreground or background posts it.
        try? await postMarkersIfAhead()
    }

    /// Posts the markers this device has beyond the server's, one post at a time: a caller arriving while a post
    /// is in flight (the debounce firing during the background's post) waits for it and then posts only what is
    /// still ahead, so the same value is never sent twice. Cancelling the caller cancels its post.
    func postMarkersIfAhead() async throws {
        while let running = markerState.postInFlight { _ = await running.result }
        let post = Task { try await self.sendMarkersIfAhead() }
        markerState.postInFlight = post
        defer { markerState.postInFlight = nil }
        try await withTaskCancellationHandler {
            try await post.value
        } onCancel: {
            post.cancel()
        }
    }

    /// One post of the markers beyond the server's; on 409 refetches, merges and retries (three attempts).
    private func sendMarkersIfAhead() async throws {
        if !markerState.fetched {
            try mergeServerMarkers(try await guarded { try await self.client.markers() })
            markerState.fetched = true
        }
        for _ in 0..<3 {
            let home = try markerAhead(.home)
            let notifications = try markerAhead(.notifications)
            guard home != nil || notifications != nil else { return }
            do {
                markerState.posts += 1
                let saved = try await guarded {
                    try await self.client.saveMarkers(home: home, notifications: notifications)
                }
                try mergeServerMarkers(saved)
                broadcaster.publish(.markersSaved(home: home, notifications: notifications))
                return
            } catch let error as MastodonError where error == .conflict {
                try mergeServerMarkers(try await guarded { try await self.client.markers() })
            }
        }
        throw MastodonError(.conflict, endpoint: "/api/v1/markers", detail: "still conflicting after 3 attempts")
    }

    func markerAhead(_ timeline: MastodonMarkerTimeline) throws -> ServerID? {
        guard let local = try localMarker(timeline) else { return nil }
        return markerState.server[timeline].map { local > $0 } ?? true ? local : nil
    }
}
