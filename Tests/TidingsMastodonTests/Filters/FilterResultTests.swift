import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox
import TidingsSandboxKit

/// Statuses' `filtered` (v2 `FilterResult`s): decoded, kept in the cache, `warn` matches exposed for the app's
/// warning, `hide` matches dropped from timelines as Mastodon's clients do; the sandbox marks its pages.
@Suite(.timeLimit(.minutes(1)))
struct FilterResultTests {
    @Test func theOpenAPIFilterResultExampleDecodesOnAStatus() throws {
        let document = try JSONValue(parsing: try MastodonFixtures.data(named: "mastodon-openapi.json"))
        let example = try #require(document["components"]?["schemas"]?["FilterResult"]?["example"])
        let body: JSONValue = [
            "id": "1", "content": "a bad word",
            "filtered": [example, ["keyword_matches": ["no filter: skipped"]]],
        ]
        let status = try MastodonWire.decode(MastodonStatus.self, from: Data(body.jsonString().utf8))
        #expect(status.filtered.count == 1)
        let result = try #require(status.filtered.first)
        #expect(result.filter.id == "3" && result.filter.title == "Hide completely")
        #expect(result.filter.context == ["home"] && result.filter.action == "hide")
        #expect(result.keywordMatches == ["bad word"])
        #expect(result.statusMatches == ["109031743575371913"])
        #expect(status.hiddenByFilter && status.filterWarnings.isEmpty)
    }

    @Test func warnAndUnknownActionsAreKeptAndABoostCarriesItsOriginalsResults() throws {
        let body: JSONValue = [
            "id": "2", "content": "",
            "reblog": [
                "id": "1", "content": "finale",
                "filtered": [
                    [
                        "filter": ["id": "7", "title": "Spoilers", "filter_action": "warn"],
                        "keyword_matches": ["finale"],
                    ],
                    ["filter": ["id": "8", "title": "Later", "filter_action": "shimmer"], "keyword_matches": .null],
                ],
            ],
        ]
        let status = try MastodonWire.decode(MastodonStatus.self, from: Data(body.jsonString().utf8))
        #expect(!status.hiddenByFilter)
        #expect(status.filterWarnings.map(\.filter.title) == ["Spoilers"])
        #expect(status.reblog?.filtered.last?.filter.action == "shimmer")
        #expect(status.reblog?.filtered.last?.keywordMatches == [])
        // A status without the field (an older server, no token) has no results.
        let plain = try MastodonWire.decode(MastodonStatus.self, from: Data(#"{"id":"3"}"#.utf8))
        #expect(plain.filtered.isEmpty && !plain.hiddenByFilter)
    }

    @Test func theSandboxMarksMatchesAndTheEngineWarnsOrDrops() async throws {
        let fixture = try await EngineFixture(pageLimit: 40)
        await fixture.server.addFilter(
            for: fixture.alice, title: "Spoilers", keywords: ["Finale"], context: ["home"], action: "warn")
        await fixture.server.addFilter(
            for: fixture.alice, title: "Noise", keywords: ["crypto"], context: ["home"], action: "hide")
        await fixture.server.addFilter(
            for: fixture.alice, title: "Elsewhere", keywords: ["plain"], context: ["public"], action: "hide")
        let finale = ServerID(await fixture.server.post(as: fixture.bob, "the finale was great"))
        let crypto = ServerID(await fixture.server.post(as: fixture.bob, "crypto to the moon"))
        let plain = ServerID(await fixture.server.post(as: fixture.bob, "plain"))

        // The server sends every match of the home context, hide ones included; the public-only filter not.
        let client = MastodonAPIClient(
            server: URL(string: "https://sandbox.invalid")!, accountKey: "alice-check",
            authorization: MastodonAuthorization(token: "alice-token"),
            transport: MastodonSandboxTransport(server: fixture.http))
        let page = try await client.homeTimeline(MastodonPageRange(limit: 40))
        #expect(page.items.map(\.id) == [plain, crypto, finale])
        #expect(page.items.first { $0.id == crypto }?.hiddenByFilter == true)
        #expect(page.items.first { $0.id == plain }?.filtered.isEmpty == true)

        try await fixture.engine.refresh()
        #expect(try await fixture.cachedHome() == [plain, finale])
        // The warning survives the cache: the stored status still carries its result.
        let cached = try #require(try await fixture.engine.status(finale))
        #expect(cached.filterWarnings.map(\.filter.title) == ["Spoilers"])
        #expect(cached.filterWarnings.first?.keywordMatches == ["Finale"])
        #expect(try await fixture.engine.status(plain)?.filterWarnings.isEmpty == true)
    }

    /// Dropped statuses count as rows for paging: a page they fill is full, so what lies beyond is still fetched.
    @Test func pagesFilledWithHiddenStatusesNeitherStallNorLeaveAHole() async throws {
        let fixture = try await EngineFixture(pageLimit: 3)
        await fixture.server.addFilter(for: fixture.alice, title: "Noise", keywords: ["crypto"], action: "hide")
        let first = await fixture.postMany(4, content: "plain")
        try await fixture.syncToTheEnd()
        let noise = await fixture.postMany(7, content: "crypto")
        let more = await fixture.postMany(2, content: "after")
        try await fixture.syncToTheEnd()
        let cached = try await fixture.cachedHome()
        #expect(cached == (first + more).reversed())
        #expect(Set(cached).isDisjoint(with: noise))
        #expect(try await fixture.engine.entries().allSatisfy { !$0.isGap })
    }
}
