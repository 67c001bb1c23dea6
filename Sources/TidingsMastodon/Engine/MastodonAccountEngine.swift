import Foundation
import TidingsCore

/// `MastodonAccountEngine` is one signed-in account's sync engine: it joins the account's
/// ``MastodonAPIClient`` to the ``MastodonTimelineStore`` and is the only writer of that account's rows.
///
/// Guarantees:
/// - Every timeline fetch is anchored (see ``MastodonTimelinePlanner``); one refresh per timeline key is in
///   flight at a time and a second caller joins it (``MastodonTimelineRefresher``).
/// - Each page is applied in one transaction; notifications are deduplicated by server ID, grouped ones by
///   `group_key`.
/// - ``MastodonPollTarget/pollUnreadCount()`` makes one request; ``MastodonPollTarget/pollTimeline(_:)`` one
///   in the common case and at most ``timelinePagesPerPoll`` (it pages upward while newer statuses remain),
///   ``MastodonPollTarget/pollNotifications()`` at most ``notificationPagesPerPoll`` (it pages upward along
///   `Link` until the server has no newer page); v2 endpoints fall back to v1 on the next call once the server
///   answered 404.
/// - A refused token (401) publishes ``MastodonEngineChange/needsReauthentication``; the client then sends
///   nothing until the app signs the account in again.
/// - Markers never move backwards on this device and are never posted below the server's value.
/// - Optimistic actions are in the durable outbox in the same transaction as their effect, and are replayed
///   after a restart by ``replayOutbox()``.
///
/// Several accounts, on one host or several, each get an engine of their own; they may share one store
/// (rows are keyed by ``account``). The engine runs on its store's queue, so its synchronous store calls never
/// block a thread of the cooperative pool.
public actor MastodonAccountEngine: MastodonPollTarget {
    /// The account's key in the store (stable, never a token).
    public nonisolated let account: String
    /// The account's API client.
    public nonisolated let client: MastodonAPIClient
    /// The store the engine writes.
    public nonisolated let store: MastodonTimelineStore
    /// The items asked per page (Mastodon: 40 for home and notifications).
    public nonisolated let pageLimit: Int
    let clock: any Clock<Duration>
    let refresher: MastodonTimelineRefresher
    let broadcaster = ChangeBroadcaster<MastodonEngineChange> { .missed($0) }
    let markerStorage: SQLiteMarkerStorage
    var capabilitiesCache: MastodonCapabilities?
    var version1Notifications = false
    var version1UnreadCount = false
    var notificationsBacklogged = false
    var timelineBacklog: Set<String> = []
    var unread: (count: Int, flag: Bool)?
    var markerState = MarkerState()
    var outboxAttempts: [Int64: Int] = [:]
    var outboxDraining = false
    var filtersCache: [MastodonFilter]?
    var version1Filters = false
    /// The server answered `GET /api/v1/statuses?id[]=` as a route it lacks (a compatible server that names a
    /// Mastodon 4.3+ version): re-checks go one status at a time from then on.
    var statusesByIDMissing = false

    /// Runs on the store's queue (its `SQLiteExecutor`).
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        store.database.executor.asUnownedSerialExecutor()
    }

    /// An engine for the account `client` signs in as.
    ///
    /// - Parameters:
    ///   - client: The account's API client.
    ///   - store: The store (opened with ``MastodonTimelineSchema/schema``); several engines may share it.
    ///   - account: The account's key in the store; the client's `accountKey` by default.
    ///   - capabilities: The server's capabilities when already known; fetched when first needed otherwise.
    ///   - clock: Schedules the marker debounce (a `TestClock` in tests).
    ///   - pageLimit: The `limit` of timeline and notification pages.
    public init(
        client: MastodonAPIClient, store: MastodonTimelineStore, account: String? = nil,
        capabilities: MastodonCapabilities? = nil, clock: any Clock<Duration> = ContinuousClock(),
        pageLimit: Int = 40
    ) {
        let account = account ?? client.accountKey
        self.account = account
        self.client = client
        self.store = store
        self.clock = clock
        self.pageLimit = max(1, pageLimit)
        self.capabilitiesCache = capabilities
        self.markerStorage = SQLiteMarkerStorage(database: store.database)
        let cap = LockedState<Int?>(capabilities?.maximumPageLimit)
        self.serverCap = cap
        self.refresher = MastodonTimelineRefresher(
            store: store, limit: max(1, pageLimit), serverCap: { _ in cap.withLock { $0 } },
            fetch: { key, plan in try await Self.fetchPage(client: client, key: key, plan: plan) })
    }

    let serverCap: LockedState<Int?>

    /// A fresh stream of this engine's changes for one subscriber (bounded; a lag marker when it falls behind).
    public nonisolated func changes() -> ChangeSubscription<MastodonEngineChange> { broadcaster.subscribe() }

    // MARK: Capabilities

    /// The server's capabilities, fetched once (v2 instance, falling back to v1) and then kept.
    ///
    /// - Throws: ``MastodonError`` from the instance endpoints.
    public func capabilities() async throws -> MastodonCapabilities {
        if let capabilitiesCache { return capabilitiesCache }
        let fetched = try await guarded { try await MastodonCapabilities.fetch(with: self.client) }
        capabilitiesCache = fetched
        serverCap.withLock { $0 = fetched.maximumPageLimit }
        return fetched
    }

    /// Forgets the kept capabilities and fetches them again (the app calls it when the server may have
    /// changed, e.g. after an upgrade).
    ///
    /// - Throws: ``MastodonError`` from the instance endpoints.
    @discardableResult
    public func refreshCapabilities() async throws -> MastodonCapabilities {
        capabilitiesCache = nil
        return try await capabilities()
    }

    // MARK: Timelines

    /// Refreshes `timeline` (newer than the newest cached, or a cold load), joining a refresh in flight.
    ///
    /// - Parameter timeline: `home`, `public`, `local`, `tag:<hashtag>` or `list:<list ID>`.
    /// - Throws: ``MastodonError`` (``MastodonError/unsupported`` for a timeline the engine cannot fetch,
    ///   ``MastodonError/notFound`` for a list that is not the reader's), or a store error.
    @discardableResult
    public func refresh(_ timeline: String = MastodonTimelineKey.homeTimeline) async throws
        -> MastodonTimelineApplyResult
    {
        let key = MastodonTimelineKey(account: account, timeline: timeline)
        let result = try await guarded { try await self.refresher.refresh(key) }
        try afterPage(key, result)
        return result
    }

    /// Loads the page older than the oldest cached status of `timeline`.
    ///
    /// - Throws: as ``refresh(_:)``.
    @discardableResult
    public func loadOlder(_ timeline: String = MastodonTimelineKey.homeTimeline) async throws
        -> MastodonTimelineApplyResult
    {
        try await load(.loadOlder, timeline: timeline)
    }

    /// Loads the next page into the gap at `position` of `timeline`, from `side` (the newer side by default:
    /// only it can close a gap). The open gap on top of the timeline is loaded as a refresh, so it joins a
    /// refresh of the timeline in flight (and a later refresh joins it): one request, one page applied.
    ///
    /// - Throws: ``MastodonTimelineError`` when there is no open gap there; otherwise as ``refresh(_:)``.
    @discardableResult
    public func loadGap(
        _ timeline: String = MastodonTimelineKey.homeTimeline, position: Int64, side: MastodonGapSide = .newer
    ) async throws -> MastodonTimelineApplyResult {
        let key = MastodonTimelineKey(account: account, timeline: timeline)
        // The planner plans the gap on top as a refresh; outside the single flight a concurrent refresh (the
        // stream's, a tick's) would send the same `min_id` and apply its page again on a stale plan.
        if MastodonTimelinePlanner.isTopGap(position, in: try readNow({ db in try store.entries(key, in: db) })) {
            return try await refresh(timeline)
        }
        return try await load(.loadGap(position: position, side: side), timeline: timeline)
    }

    func load(_ request: MastodonTimelineRequest, timeline: String) async throws -> MastodonTimelineApplyResult {
        let key = MastodonTimelineKey(account: account, timeline: timeline)
        let cap = serverCap.withLock { $0 }
        let plan = try readNow { db in
            try self.store.plan(request, for: key, limit: self.pageLimit, serverCap: cap, in: db)
        }
        let page = try await guarded { try await Self.fetchPage(client: self.client, key: key, plan: plan) }
        let result = try writeNow { db in try self.store.apply(page, for: plan, to: key, in: db) }
        try afterPage(key, result)
        return result
    }

    /// Re-applies pending actions over statuses a page refreshed, and tells subscribers.
    func afterPage(_ key: MastodonTimelineKey, _ result: MastodonTimelineApplyResult) throws {
        if result.updated > 0 { try reapplyPendingEffects() }
        if result.inserted > 0 || result.updated > 0 || result.gapClosed || result.gapUnfillable
            || result.gapInserted || result.cursorMoved
        {
            broadcaster.publish(.timeline(key, inserted: result.inserted))
        }
    }

    /// The entries of `timeline`, oldest first.
    public func entries(_ timeline: String = MastodonTimelineKey.homeTimeline) throws -> [MastodonTimelineEntry] {
        let key = MastodonTimelineKey(account: account, timeline: timeline)
        return try readNow { db in try self.store.entries(key, in: db) }
    }

    /// The cached status `id`, decoded, or nil when it is not cached.
    ///
    /// - Throws: ``MastodonError/decoding`` for a payload this version cannot read, or a store error.
    public func status(_ id: ServerID) throws -> MastodonStatus? {
        guard let stored = try readNow({ db in try self.store.status(account: self.account, id: id, in: db) })
        else { return nil }
        return try MastodonStatusPayload.decode(stored.payload)
    }

    /// Fetches the page for `plan` and turns it into a store page.
    static func fetchPage(
        client: MastodonAPIClient, key: MastodonTimelineKey, plan: MastodonTimelineFetchPlan
    ) async throws -> MastodonTimelinePage {
        var range = MastodonPageRange(minID: plan.minID, maxID: plan.maxID, limit: plan.limit)
        var page = try await fetchStatuses(client: client, timeline: key.timeline, range)
        // Inside a gap there is no cached status to keep a cursor on: a page the server filtered empty (or whose
        // every status a `hide` filter matched) is followed by its `Link` (a few hops at most), so filters never make a fillable gap look unfillable.
        if case .gap(_, let side, _) = plan.anchor {
            for _ in 0..<maximumFilteredHops where page.items.allSatisfy(\.hiddenByFilter) && page.skipped == 0 {
                guard let next = side == .newer ? page.older : page.newer else { break }
                range = MastodonPageRange(
                    minID: side == .older ? next.minID : nil, maxID: side == .newer ? next.maxID : nil,
                    limit: plan.limit)
                page = try await fetchStatuses(client: client, timeline: key.timeline, range)
            }
        }
        var items: [MastodonTimelinePage.Item] = []
        // Statuses a `hide` filter matched are dropped, as Mastodon's clients do; for paging they count as rows
        // the server filtered (a page short of them may not be the end).
        var hidden = 0
        for status in page.items {
            if status.hiddenByFilter {
                hidden += 1
                continue
            }
            items.append(
                .init(id: status.id, payload: try MastodonStatusPayload.encode(status), boosted: status.reblog?.id))
        }
        let newest = page.items.map(\.id).max()
        let cursor = page.newer?.minID
        switch plan.anchor {
        case .older, .gap(_, .newer, _):
            // `max_id` pages: `next` is the only sign that more remain (pages come back short under filters).
            let linked = page.older != nil || page.newer != nil
            return MastodonTimelinePage(
                items: items, hasMore: linked ? page.older != nil : nil, olderCursor: page.older?.maxID)
        case .cold, .newer, .gap(_, .older, _):
            // `min_id` pages: `prev` is sent whether or not anything newer remains, so it says nothing about
            // fullness. A page is full when it has `limit` rows, or when some were dropped (undecodable, or
            // filtered: the cursor is above the newest shown) — then a gap, never a silent hole.
            var filtered = cursor.map { newest == nil || $0 > newest! } ?? false
            if case .newer = plan.anchor, let oldestPaged = page.older?.maxID,
                page.items.map(\.id).min().map({ oldestPaged < $0 }) ?? true
            {
                // Rows were dropped below the oldest shown too: a refresh anchored one row below the newest may
                // have spent the page on them.
                filtered = true
            }
            let full = items.count + hidden >= plan.limit || page.skipped > 0 || filtered
            return MastodonTimelinePage(
                items: items, hasMore: full, newerCursor: cursor, olderCursor: page.older?.maxID)
        }
    }

    /// How many further pages a gap load follows when the server filtered a page empty.
    static let maximumFilteredHops = 8

    static func fetchStatuses(
        client: MastodonAPIClient, timeline: String, _ range: MastodonPageRange
    ) async throws -> MastodonPage<MastodonStatus> {
        switch timeline {
        case MastodonTimelineKey.homeTimeline: return try await client.homeTimeline(range)
        case "public": return try await client.publicTimeline(local: false, range)
        case "local": return try await client.publicTimeline(local: true, range)
        default: break
        }
        if let tag = timeline.dropPrefix(MastodonTimelineKey.tagPrefix), !tag.isEmpty {
            return try await client.tagTimeline(tag, range)
        }
        if let list = timeline.dropPrefix(MastodonTimelineKey.listPrefix), !list.isEmpty {
            return try await client.listTimeline(ServerID(list), range)
        }
        throw MastodonError(.unsupported, detail: "timeline \(timeline)")
    }

    /// Runs a request; a refused token is told to subscribers once per refusal.
    func guarded<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as MastodonError where error == .unauthorized {
            broadcaster.publish(.needsReauthentication)
            throw error
        }
    }
}

extension MastodonAccountEngine {
    /// A write transaction run right here, on the store's queue the engine runs on. (Synchronous on purpose:
    /// inside an `async` method the store's `async` overload would be chosen, a needless hop.)
    func writeNow<T>(_ body: (SQLiteConnection) throws -> T) throws -> T { try store.database.write(body) }

    /// A read transaction run right here, on the store's queue the engine runs on.
    func readNow<T>(_ body: (SQLiteConnection) throws -> T) throws -> T { try store.database.read(body) }
}

extension String {
    /// The rest of the string after `prefix`, or nil when it does not start with it.
    fileprivate func dropPrefix(_ prefix: String) -> String? {
        hasPrefix(prefix) ? String(dropFirst(prefix.count)) : nil
    }
}
