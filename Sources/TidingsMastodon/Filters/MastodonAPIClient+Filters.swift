extension MastodonAPIClient {
    /// The reader's filters from `GET /api/v2/filters` (Mastodon 4.0+).
    ///
    /// - Throws: ``MastodonError`` (`.notFound` on servers without the v2 API).
    public func filtersV2() async throws -> [MastodonFilter] {
        try await get([MastodonFilter].self, "/api/v2/filters")
    }

    /// The reader's filters from `GET /api/v1/filters` (servers before Mastodon 4, and their forks).
    ///
    /// - Throws: ``MastodonError``.
    public func filtersV1() async throws -> [MastodonFilter] {
        try await get([MastodonFilter].self, "/api/v1/filters")
    }
}
