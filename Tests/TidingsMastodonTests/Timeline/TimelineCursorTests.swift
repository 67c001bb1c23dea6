import Foundation
import Testing
import TidingsCore

@testable import TidingsMastodon

/// Paging cursors from `Link`: a page the server filtered empty moves the next fetch past it, and a cursor no
/// longer applies once the end of the timeline it extends has changed.
@Suite(.timeLimit(.minutes(1)))
struct TimelineCursorTests {
    typealias S = TimelineTestSupport

    static func page(_ ids: [Int], newer: Int? = nil, older: Int? = nil, hasMore: Bool? = false)
        -> MastodonTimelinePage
    {
        var page = S.page(ids, hasMore: hasMore)
        page.newerCursor = newer.map { ServerID(String($0)) }
        page.olderCursor = older.map { ServerID(String($0)) }
        return page
    }

    @Test func anEmptyRefreshPageMovesTheNextRefreshAboveItsCursor() async throws {
        let store = try S.store()
        try await S.load(store, .refresh, ids: [12, 11, 10], limit: 3, hasMore: false)
        var plan = try await store.plan(.refresh, for: S.home, limit: 3)
        #expect(plan.minID == "11")  // one row below the newest, so the page can repeat it
        // The server paged over 13…15 and showed none of them (filtered).
        let result = try await store.apply(Self.page([], newer: 15), for: plan, to: S.home)
        #expect(result.cursorMoved)
        plan = try await store.plan(.refresh, for: S.home, limit: 3)
        #expect(plan.minID == "15")
        try await store.apply(Self.page([16]), for: plan, to: S.home)
        #expect(S.shape(try await store.entries(S.home)) == "16 12 11 10")
        // Once the top moved, the old cursor is spent (a gap-free row below the new top is 12).
        #expect(try await store.plan(.refresh, for: S.home, limit: 3).minID == "12")
    }

    /// Found by the timeline model test: in a capped feed a full `min_id` page may start well above its anchor;
    /// when it was filtered empty, what the next refresh finds above its cursor must still get a gap below.
    @Test func aFullPageFilteredEmptyLeavesAGapBelowWhatComesNext() async throws {
        let store = try S.store()
        try await S.load(store, .refresh, ids: [10], limit: 2, hasMore: false)
        var plan = try await store.plan(.refresh, for: S.home, limit: 2)
        try await store.apply(Self.page([], newer: 15, hasMore: true), for: plan, to: S.home)
        plan = try await store.plan(.refresh, for: S.home, limit: 2)
        #expect(plan.minID == "15")
        let result = try await store.apply(Self.page([19], newer: 19, hasMore: false), for: plan, to: S.home)
        #expect(result.gapInserted)
        #expect(S.shape(try await store.entries(S.home)) == "19 ~ 10")
    }

    @Test func anEmptyOlderPageMovesTheNextLoadBelowItsCursor() async throws {
        let store = try S.store()
        try await S.load(store, .refresh, ids: [30, 29], limit: 3, hasMore: false)
        var plan = try await store.plan(.loadOlder, for: S.home, limit: 3)
        #expect(plan.maxID == "29")
        let result = try await store.apply(Self.page([], older: 20, hasMore: true), for: plan, to: S.home)
        #expect(result.cursorMoved && !result.reachedEnd)
        plan = try await store.plan(.loadOlder, for: S.home, limit: 3)
        #expect(plan.maxID == "20")
    }

    @Test func aColdPageFilteredEmptyStillReachesBothEnds() async throws {
        let store = try S.store()
        var plan = try await store.plan(.refresh, for: S.home, limit: 3)
        try await store.apply(Self.page([], newer: 50, older: 48, hasMore: true), for: plan, to: S.home)
        // The newest visible statuses lie below the filtered page: refreshing the empty timeline goes on down.
        plan = try await store.plan(.refresh, for: S.home, limit: 3)
        #expect(plan.maxID == "48")
        #expect(try await store.plan(.loadOlder, for: S.home, limit: 3).maxID == "48")
        try await store.apply(Self.page([47, 46], older: 45, hasMore: false), for: plan, to: S.home)
        #expect(S.shape(try await store.entries(S.home)) == "47 46")
        // Once something is cached, refreshing starts from it (the empty timeline's cursors are spent).
        #expect(try await store.plan(.refresh, for: S.home, limit: 3).minID == "46")
    }

    @Test func aCursorIsForgottenWhenItsAnchorIsDeleted() async throws {
        let store = try S.store()
        try await S.load(store, .refresh, ids: [12, 11], limit: 3, hasMore: false)
        let plan = try await store.plan(.refresh, for: S.home, limit: 3)
        try await store.apply(Self.page([], newer: 15), for: plan, to: S.home)
        try await store.delete(account: S.home.account, id: "12")
        // The anchor it extended is gone: refreshing from 11 asks again rather than skip what lay above 11.
        #expect(try await store.plan(.refresh, for: S.home, limit: 3).minID == "11")
    }
}
