import Foundation
import TidingsCore

@testable import TidingsMastodon

/// Helpers shared by the timeline tests: an in-memory store, pages from IDs, a readable timeline shape.
enum TimelineTestSupport {
    static let home = MastodonTimelineKey.home(account: "a@example.social")

    static func store(
        cipher: ValueCipher? = nil, now: @escaping @Sendable () -> Date = { Date(timeIntervalSince1970: 1_700_000_000) }
    ) throws -> MastodonTimelineStore {
        let database = try SQLiteDatabase.inMemory(
            schema: MastodonTimelineSchema.schema, configuration: .init(cipher: cipher))
        return MastodonTimelineStore(database: database, now: now)
    }

    static func page(_ ids: [Int], hasMore: Bool? = nil) -> MastodonTimelinePage {
        MastodonTimelinePage(
            items: ids.map { MastodonTimelinePage.Item(id: ServerID(String($0)), payload: Data("s\($0)".utf8)) },
            hasMore: hasMore)
    }

    /// The timeline newest first as text: IDs, `~` for an open gap, `x` for an unfillable one.
    static func shape(_ entries: [MastodonTimelineEntry]) -> String {
        entries.reversed().map { entry in
            switch entry.content {
            case .status(let id): id.rawValue
            case .gap(.open): "~"
            case .gap(.unfillable): "x"
            }
        }.joined(separator: " ")
    }

    /// Plans `request`, answers it with `ids`, applies, and returns the result.
    @discardableResult
    static func load(
        _ store: MastodonTimelineStore, _ request: MastodonTimelineRequest, ids: [Int], limit: Int,
        hasMore: Bool? = nil, key: MastodonTimelineKey = home
    ) async throws -> MastodonTimelineApplyResult {
        let plan = try await store.plan(request, for: key, limit: limit)
        return try await store.apply(page(ids, hasMore: hasMore), for: plan, to: key)
    }
}
