import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox
import TidingsSandboxKit

/// Where a full `min_id` refresh page leaves its gap.
///
/// Mastodon answers `min_id` with the rows just newer than the anchor (the page sits right above the cached
/// top), `since_id` with the newest rows (the page sits at the server's top). So after a full `min_id` page
/// what is missing lies above the page, and the gap must be there — not between the page and the cache,
/// where nothing is missing.
@Suite(.timeLimit(.minutes(1)))
struct RefreshGapPlacementTests {
    @Test func aFullMinIDPageLeavesItsGapAboveThePageAndLoadingItFillsExactlyTheMissingRange() async throws {
        let fixture = try await EngineFixture(pageLimit: 40)
        let old = await fixture.postMany(10, content: "old")
        try await fixture.engine.refresh()
        #expect(try await fixture.cachedHome() == old.reversed())
        let new = await fixture.postMany(100, content: "new")
        let before = fixture.requests("/api/v1/timelines/home")

        let result = try await fixture.engine.refresh()
        #expect(result.inserted >= 39)
        var entries = try await fixture.engine.entries()
        // The page joins the cache (no gap between them) and a gap above it says newer posts remain.
        #expect(entries.last?.content == .gap(.open), "the gap must be above the page: \(entries)")
        #expect(entries.dropLast().allSatisfy { !$0.isGap }, "no gap between the cache and the page: \(entries)")
        let joined = entries.compactMap(\.statusID)
        #expect(joined == Array((old + new).prefix(joined.count)), "the page continues right above the cache")

        // Loading the gap fills exactly what is missing: every request adds the next rows, none twice.
        var loads = 0
        while let gap = entries.last(where: { $0.content == .gap(.open) }), loads < 10 {
            let filled = try await fixture.engine.loadGap(position: gap.position)
            #expect(filled.inserted > 0)
            loads += 1
            entries = try await fixture.engine.entries()
            let ids = entries.compactMap(\.statusID)
            #expect(ids == Array((old + new).prefix(ids.count)), "no hole, no duplicate after load \(loads)")
            #expect(entries.dropLast().allSatisfy { !$0.isGap })
        }
        #expect(entries.allSatisfy { !$0.isGap })
        // 100 new posts at 40 a page (one row of each page re-reads the cached top): 3 requests in all.
        #expect(fixture.requests("/api/v1/timelines/home") - before == 1 + loads)
        #expect(loads == 2)
        #expect(try await fixture.cachedHome() == (old + new).reversed())
        #expect(try await fixture.cachedHome() == fixture.serverHome())
    }

    /// The sandbox answers as Mastodon documents: `min_id` the rows just above it, `since_id` the newest.
    @Test func theSandboxAnswersMinIDWithTheRowsJustAboveAndSinceIDWithTheNewest() async throws {
        let fixture = try await EngineFixture(pageLimit: 40)
        let ids = await fixture.postMany(100)
        let client = MastodonAPIClient(
            server: URL(string: "https://sandbox.invalid")!, accountKey: "alice-check",
            authorization: MastodonAuthorization(token: "alice-token"),
            transport: MastodonSandboxTransport(server: fixture.http))
        let minPage = try await client.homeTimeline(MastodonPageRange(minID: ids[9], limit: 40))
        #expect(minPage.items.map(\.id) == Array(ids[10..<50].reversed()))
        let sincePage = try await client.homeTimeline(MastodonPageRange(sinceID: ids[9], limit: 40))
        #expect(sincePage.items.map(\.id) == Array(ids[60..<100].reversed()))
    }
}
