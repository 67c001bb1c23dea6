import TidingsCore

/// A `MastodonTimelineRefresher` runs at most one refresh per timeline key: a caller that asks while one is in
/// flight joins it and gets its result, and no second request goes out.
///
/// A refresh plans from the store, awaits `fetch` (the network), and applies the page in one transaction.
public final class MastodonTimelineRefresher: Sendable {
    /// Fetches the page for a plan (the API client's job); it must honour cancellation and a deadline.
    public typealias Fetch =
        @Sendable (MastodonTimelineKey, MastodonTimelineFetchPlan) async throws -> MastodonTimelinePage

    private let store: MastodonTimelineStore
    private let flights = SingleFlight<MastodonTimelineKey, MastodonTimelineApplyResult>()
    private let fetch: Fetch
    private let limit: Int
    private let serverCap: @Sendable (MastodonTimelineKey) -> Int?

    /// A refresher over `store` that asks `limit` per page (capped per key by `serverCap`) through `fetch`.
    public init(
        store: MastodonTimelineStore, limit: Int = 40,
        serverCap: @escaping @Sendable (MastodonTimelineKey) -> Int? = { _ in nil }, fetch: @escaping Fetch
    ) {
        self.store = store
        self.limit = limit
        self.serverCap = serverCap
        self.fetch = fetch
    }

    /// Refreshes `key` (newer than the newest cached, or a cold load), or joins the refresh in flight.
    ///
    /// - Throws: the shared refresh's error; `CancellationError` when this caller is cancelled (the shared
    ///   refresh goes on for the others).
    @discardableResult
    public func refresh(_ key: MastodonTimelineKey) async throws -> MastodonTimelineApplyResult {
        try await flights.run(key: key) { [store, fetch, limit, serverCap] in
            let plan = try await store.plan(.refresh, for: key, limit: limit, serverCap: serverCap(key))
            let page = try await fetch(key, plan)
            return try await store.apply(page, for: plan, to: key)
        }
    }

    /// How many callers wait on the refresh of `key` now (zero when none is in flight).
    public func waitingCallers(_ key: MastodonTimelineKey) async -> Int { await flights.callerCount(key: key) }
}
