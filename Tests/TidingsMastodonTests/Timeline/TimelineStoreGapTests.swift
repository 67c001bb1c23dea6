import Foundation
import Testing
import TidingsCore

@testable import TidingsMastodon

@Suite(.timeLimit(.minutes(1))) struct TimelineStoreGapTests {
    typealias S = TimelineTestSupport

    @Test func coldLoadStoresThePageInServerOrderWithoutAGap() async throws {
        let store = try S.store()
        // "9" < "10" < "11" by ServerID order; plain string order would put "9" on top.
        try await S.load(store, .refresh, ids: [10, 9, 11], limit: 3)
        #expect(S.shape(try await store.entries(S.home)) == "11 10 9")
    }

    /// `min_id` pages are the rows just above the anchor: a full one joins the cache when it repeats the newest
    /// cached status (the plan anchors one row below it), and what remains lies above it, behind a gap on top.
    @Test func aFullMinIDPageThatRepeatsTheNewestJoinsWithAGapOnTop() async throws {
        let store = try S.store()
        try await S.load(store, .refresh, ids: [3, 2, 1], limit: 3)
        #expect(try await store.plan(.refresh, for: S.home, limit: 3).minID == "2")
        let result = try await S.load(store, .refresh, ids: [5, 4, 3], limit: 3)
        #expect(result.gapInserted && result.newerRemain && result.inserted == 2)
        #expect(S.shape(try await store.entries(S.home)) == "~ 5 4 3 2 1")
        // The gap on top is loaded upwards, as a refresh, from either side; a short page closes it.
        let gap = try #require(try await store.entries(S.home).last).position
        let plan = try await store.plan(.loadGap(position: gap, side: .newer), for: S.home, limit: 3)
        #expect(plan.minID == "4" && plan.maxID == nil)
        let closing = try await S.load(
            store, .loadGap(position: gap, side: .newer), ids: [7, 6, 5], limit: 3, hasMore: false)
        #expect(closing.gapClosed && !closing.newerRemain && closing.inserted == 2)
        #expect(S.shape(try await store.entries(S.home)) == "7 6 5 4 3 2 1")
    }

    /// A full page that does not repeat the newest may have skipped rows right above it (a capped feed answers
    /// a fallen-out anchor with its oldest rows): a gap below it too, never a silent hole.
    @Test func aFullMinIDPageThatSkipsTheNewestKeepsAGapBelowAndOneOnTop() async throws {
        let store = try S.store()
        try await S.load(store, .refresh, ids: [3, 2, 1], limit: 3)
        let result = try await S.load(store, .refresh, ids: [9, 8, 7], limit: 3)
        #expect(result.gapInserted && result.newerRemain && result.inserted == 3)
        #expect(S.shape(try await store.entries(S.home)) == "~ 9 8 7 ~ 3 2 1")
    }

    @Test func aShortMinIDPageJoins() async throws {
        let store = try S.store()
        try await S.load(store, .refresh, ids: [3, 2, 1], limit: 3)
        let result = try await S.load(store, .refresh, ids: [5, 4], limit: 3)
        #expect(!result.gapInserted)
        #expect(S.shape(try await store.entries(S.home)) == "5 4 3 2 1")
    }

    @Test func theLinkHeaderWinsOverTheCount() async throws {
        let store = try S.store()
        try await S.load(store, .refresh, ids: [3, 2, 1], limit: 3)
        // Short because of server-side filters, but the Link header says more remain.
        try await S.load(store, .refresh, ids: [9], limit: 3, hasMore: true)
        #expect(S.shape(try await store.entries(S.home)) == "~ 9 ~ 3 2 1")
        // Full, but the Link header says it is the end.
        try await S.load(store, .refresh, ids: [12, 11, 10], limit: 3, hasMore: false)
        #expect(S.shape(try await store.entries(S.home)) == "12 11 10 9 ~ 3 2 1")
    }

    @Test func loadingAGapFromTheNewerSidePagesInwardUntilItCloses() async throws {
        let store = try S.store()
        try await S.load(store, .refresh, ids: [2, 1], limit: 2)
        try await S.load(store, .refresh, ids: [20, 19], limit: 2)
        var gap = try #require(try await store.entries(S.home).first(where: \.isGap)).position
        var result = try await S.load(store, .loadGap(position: gap, side: .newer), ids: [18, 17], limit: 2)
        #expect(!result.gapClosed && result.inserted == 2)
        #expect(S.shape(try await store.entries(S.home)) == "~ 20 19 18 17 ~ 2 1")
        gap = try #require(try await store.entries(S.home).first(where: \.isGap)).position
        // Reaching the older neighbour (2) closes the gap; 2 itself is not duplicated.
        result = try await S.load(store, .loadGap(position: gap, side: .newer), ids: [16, 2], limit: 2)
        #expect(result.gapClosed && result.inserted == 1)
        #expect(S.shape(try await store.entries(S.home)) == "~ 20 19 18 17 16 2 1")
    }

    @Test func aPageFromTheOlderSideKeepsTheGapBelowItUntilTheNewerSideCloses() async throws {
        let store = try S.store()
        try await S.load(store, .refresh, ids: [2, 1], limit: 2)
        try await S.load(store, .refresh, ids: [20, 19], limit: 2)
        var gap = try #require(try await store.entries(S.home).first(where: \.isGap)).position
        // Full and short of 19: the page may have skipped rows right above 2 (a capped feed) and below 19.
        var result = try await S.load(store, .loadGap(position: gap, side: .older), ids: [3, 4], limit: 2)
        #expect(result.inserted == 2 && result.gapInserted && !result.gapClosed)
        #expect(S.shape(try await store.entries(S.home)) == "~ 20 19 ~ 4 3 ~ 2 1")
        // The gap right below 19 (the one on top says newer statuses remain above 20).
        gap = try #require(try await store.entries(S.home).filter(\.isGap).dropLast().last).position
        // Reaching 19 joins the page to it; a gap stays below it (anchored on 4, a capped feed could skip).
        result = try await S.load(store, .loadGap(position: gap, side: .older), ids: [5, 19], limit: 2)
        #expect(result.inserted == 1 && !result.gapInserted && !result.gapClosed)
        #expect(S.shape(try await store.entries(S.home)) == "~ 20 19 5 ~ 4 3 ~ 2 1")
        // Newer-side loads reach the older neighbours and close both.
        gap = try #require(try await store.entries(S.home).filter(\.isGap).dropLast().last).position
        result = try await S.load(store, .loadGap(position: gap, side: .newer), ids: [4, 3], limit: 2)
        #expect(result.gapClosed && result.inserted == 0)
        gap = try #require(try await store.entries(S.home).first(where: \.isGap)).position
        result = try await S.load(store, .loadGap(position: gap, side: .newer), ids: [2, 1], limit: 2)
        #expect(result.gapClosed)
        #expect(S.shape(try await store.entries(S.home)) == "~ 20 19 5 4 3 2 1")
    }

    @Test func aGapTheServerCannotFillIsMarkedUnfillable() async throws {
        let store = try S.store()
        try await S.load(store, .refresh, ids: [2, 1], limit: 2)
        try await S.load(store, .refresh, ids: [20, 19], limit: 2)
        let gap = try #require(try await store.entries(S.home).first(where: \.isGap)).position
        // The feed cap: the server ends (no `next` link) before reaching 2.
        let result = try await S.load(store, .loadGap(position: gap, side: .newer), ids: [18], limit: 2, hasMore: false)
        #expect(result.gapUnfillable && !result.gapClosed)
        #expect(S.shape(try await store.entries(S.home)) == "~ 20 19 18 x 2 1")
        await #expect(throws: MastodonTimelineError.gapUnfillable) {
            try await store.plan(.loadGap(position: gap, side: .newer), for: S.home, limit: 2)
        }
    }

    @Test func anEmptyGapPageMarksTheGapUnfillable() async throws {
        let store = try S.store()
        try await S.load(store, .refresh, ids: [2, 1], limit: 2)
        try await S.load(store, .refresh, ids: [20, 19], limit: 2)
        let gap = try #require(try await store.entries(S.home).first(where: \.isGap)).position
        let result = try await S.load(store, .loadGap(position: gap, side: .newer), ids: [], limit: 2)
        #expect(result.gapUnfillable)
        #expect(S.shape(try await store.entries(S.home)) == "~ 20 19 x 2 1")
    }

    @Test func loadOlderAppendsBelowAndReportsTheEnd() async throws {
        let store = try S.store()
        try await S.load(store, .refresh, ids: [10, 9], limit: 2)
        var result = try await S.load(store, .loadOlder, ids: [8, 7], limit: 2)
        #expect(!result.reachedEnd)
        result = try await S.load(store, .loadOlder, ids: [6], limit: 2)
        #expect(result.reachedEnd)
        #expect(S.shape(try await store.entries(S.home)) == "10 9 8 7 6")
    }

    @Test func aRepeatedStatusIsStoredOncePerTimelineAndUpdatedInPlace() async throws {
        let store = try S.store()
        try await S.load(store, .refresh, ids: [3, 2, 1], limit: 5)
        let plan = try await store.plan(.refresh, for: S.home, limit: 5)
        // A server that compares with >= returns the anchor again.
        let page = MastodonTimelinePage(items: [
            .init(id: "3", payload: Data("new".utf8)), .init(id: "4", payload: Data("s4".utf8)),
            .init(id: "4", payload: Data("s4".utf8)),
        ])
        let result = try await store.apply(page, for: plan, to: S.home)
        #expect(result.inserted == 1 && result.updated == 1)
        #expect(S.shape(try await store.entries(S.home)) == "4 3 2 1")
        #expect(try await store.status(account: S.home.account, id: "3")?.payload == Data("new".utf8))
    }

    @Test func timelinesOfOneAccountAndOfTwoAccountsAreSeparate() async throws {
        let store = try S.store()
        let local = MastodonTimelineKey(account: S.home.account, timeline: "local")
        let other = MastodonTimelineKey.home(account: "b@example.social")
        try await S.load(store, .refresh, ids: [2, 1], limit: 5)
        try await S.load(store, .refresh, ids: [2, 3], limit: 5, key: local)
        try await S.load(store, .refresh, ids: [7], limit: 5, key: other)
        #expect(S.shape(try await store.entries(S.home)) == "2 1")
        #expect(S.shape(try await store.entries(local)) == "3 2")
        #expect(S.shape(try await store.entries(other)) == "7")
    }
}
