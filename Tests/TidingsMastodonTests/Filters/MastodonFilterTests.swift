import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox
import TidingsSandboxKit

/// The reader's filters: fetched v2 or v1 from the sandbox, refetched by `MastodonSync` at sign-in and on the
/// stream's `filters_changed`, readable per account with a change event.
@Suite(.timeLimit(.minutes(1)))
struct MastodonFilterTests {
    /// `components.examples.<name>.value` of the OpenAPI fixture.
    static func example(_ name: String) throws -> Data {
        let document = try JSONValue(parsing: try MastodonFixtures.data(named: "mastodon-openapi.json"))
        let value = try #require(document["components"]?["examples"]?[name]?["value"])
        return Data(value.jsonString().utf8)
    }

    @Test func theOpenAPIFilterExamplesDecodeInOneShape() throws {
        let v2 = try MastodonWire.decodeList(MastodonFilter.self, from: try Self.example("Filter200Example"))
        #expect(v2.skipped == 0)
        #expect(v2.elements.first?.action == "hide")
        #expect(v2.elements.first?.keywords.first == .init(keyword: "from birdsite", wholeWord: true))
        let v1 = try MastodonWire.decodeList(MastodonFilter.self, from: try Self.example("V1Filter200Example"))
        #expect(v1.skipped == 0)
        #expect(v1.elements.map(\.action) == ["warn", "hide"])
        #expect(v1.elements.first?.keywords == [.init(keyword: ":eurovision2019:", wholeWord: true)])
    }

    @Test func version2FiltersAreFetchedWithKeywordsContextsAndAction() async throws {
        let fixture = try await EngineFixture()
        await fixture.server.addFilter(
            for: fixture.alice, title: "Spoilers", keywords: ["finale", "#spoiler"], context: ["home", "public"],
            action: "warn")
        #expect(await fixture.engine.filters() == nil)
        let filters = try await fixture.engine.refreshFilters()
        #expect(filters.count == 1)
        #expect(filters.first?.title == "Spoilers")
        #expect(filters.first?.keywords.map(\.keyword) == ["finale", "#spoiler"])
        #expect(filters.first?.context == ["home", "public"])
        #expect(filters.first?.action == "warn")
        #expect(await fixture.engine.filters() == filters)
        #expect(fixture.requests("/api/v2/filters") == 1)
        #expect(fixture.requests("/api/v1/filters") == 0)
    }

    @Test func aVersion1ServerIsAskedV1AfterOne404AndEachPhraseIsAFilter() async throws {
        var version1 = MastodonSandboxVariant.mastodon
        version1.version1Only = true
        let fixture = try await EngineFixture(variant: version1)
        await fixture.server.addFilter(for: fixture.alice, title: "Noise", keywords: ["crypto", "nft"])
        let filters = try await fixture.engine.refreshFilters()
        #expect(filters.map(\.title) == ["crypto", "nft"])
        #expect(filters.allSatisfy { $0.action == "hide" && $0.context == ["home"] })
        _ = try await fixture.engine.refreshFilters()
        #expect(fixture.requests("/api/v2/filters") == 1)
        #expect(fixture.requests("/api/v1/filters") == 2)
    }

    @Test func aServerWithoutFiltersThrowsAndLeavesThemUnknown() async throws {
        let fixture = try await EngineFixture(variant: .nextcloud)
        await #expect(throws: MastodonError.notFound) { try await fixture.engine.refreshFilters() }
        #expect(await fixture.engine.filters() == nil)
    }

    @Test func onlyTheReadersOwnFiltersAreServed() async throws {
        let fixture = try await EngineFixture()
        await fixture.server.addFilter(for: fixture.bob, title: "Bob's", keywords: ["x"])
        #expect(try await fixture.engine.refreshFilters().isEmpty)
    }

    @Test func syncFetchesFiltersAtSignInAndRefetchesThemOnTheStreamsFiltersChanged() async throws {
        let base = try await EngineFixture()
        let first = await base.server.addFilter(for: base.alice, title: "Old", keywords: ["old"])
        let sync = MastodonSync(
            clock: base.clock, settings: MastodonPollSettings(preset: .manual),
            streamConnector: MastodonSandboxServer.inProcessStreamConnector(base.http), random: { 0.5 })
        let changes = sync.changes()
        await sync.appStateChanged(.activeAccount("alice@sandbox"))
        let client = MastodonAPIClient(
            server: URL(string: "https://sandbox.invalid")!, accountKey: "alice@sandbox",
            authorization: MastodonAuthorization(token: "alice-token"),
            transport: MastodonSandboxTransport(server: base.http))
        let engine = await sync.addAccount(client: client, store: base.store)
        #expect(await engine.filters()?.map(\.title) == ["Old"])
        #expect(await eventually { await sync.streamState(for: "alice@sandbox") == .open })

        // The server's filters change: the stream says so, the engine refetches and reports it.
        await base.server.addFilter(for: base.alice, title: "New", keywords: ["new"])
        await base.server.removeFilter(first)
        #expect(await eventually { await engine.filters()?.map(\.title) == ["New"] })
        var sawChange = false
        for await change in changes {
            if case .engine("alice@sandbox", .filtersChanged) = change {
                sawChange = true
                break
            }
        }
        #expect(sawChange)
        #expect(base.requests("/api/v2/filters") >= 2)
        await sync.shutdown()
    }
}
