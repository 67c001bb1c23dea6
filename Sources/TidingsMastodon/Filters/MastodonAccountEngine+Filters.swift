import TidingsCore

/// The reader's filters, kept in memory per account and refetched at sign-in, at launch and on the stream's
/// `filters_changed`.
///
/// Why in memory and not in the store: the server is the only source of truth and applies them itself
/// (Mastodon 4's v2 filters drop `hide` matches from pages and mark `warn` matches with `filtered` on the
/// status), so the engine never filters its cache with them; the app reads them to show and manage filters,
/// and a launch refetches them. Offline, before the first fetch, ``filters()`` is nil.
extension MastodonAccountEngine {
    /// The filters last fetched, or nil before the first successful fetch.
    public func filters() -> [MastodonFilter]? { filtersCache }

    /// Fetches the reader's filters (v2, falling back to v1 when the server has no v2 API) and publishes
    /// ``MastodonEngineChange/filtersChanged`` when they differ from what was kept.
    ///
    /// - Returns: The filters fetched.
    /// - Throws: ``MastodonError`` (the kept filters stay).
    @discardableResult
    public func refreshFilters() async throws -> [MastodonFilter] {
        let fetched: [MastodonFilter]
        if version1Filters {
            fetched = try await guarded { try await self.client.filtersV1() }
        } else {
            do {
                fetched = try await guarded { try await self.client.filtersV2() }
            } catch MastodonError.notFound {
                version1Filters = true
                fetched = try await guarded { try await self.client.filtersV1() }
            }
        }
        guard fetched != filtersCache else { return fetched }
        filtersCache = fetched
        broadcaster.publish(.filtersChanged)
        return fetched
    }
}
