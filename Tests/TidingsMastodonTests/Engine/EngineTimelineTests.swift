import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox
import TidingsSandboxKit

/// The account engine's timelines against the in-process sandbox and its variants.
@Suite(.timeLimit(.minutes(1)))
struct EngineTimelineTests {
    static let variants: [(String, MastodonSandboxVariant)] = [
        ("mastodon", .mastodon), ("gotosocial", .goToSocial), ("pleroma", .pleroma), ("nextcloud", .nextcloud),
        (
            "keyword filter",
            {
                var variant = MastodonSandboxVariant.mastodon; variant.hiddenKeyword = "3"; return variant
            }()
        ),
        (
            "short snowflakes",
            {
                var variant = MastodonSandboxVariant(); variant.idStyle = .snowflake(digits: 3); return variant
            }()
        ),
    ]

    @Test(arguments: variants.indices)
    func theCacheEqualsTheServersHomeOnEveryVariant(_ index: Int) async throws {
        let (name, variant) = Self.variants[index]
        let fixture = try await EngineFixture(variant: variant, pageLimit: 7)
        await fixture.postMany(30)
        try await fixture.syncToTheEnd()
        #expect(try await fixture.cachedHome() == fixture.serverHome(), "\(name)")
        // New posts arrive on top with no hole and no duplicate.
        await fixture.postMany(12)
        try await fixture.syncToTheEnd()
        let cached = try await fixture.cachedHome()
        #expect(cached == (try await fixture.serverHome()), "\(name)")
        #expect(Set(cached).count == cached.count)
        #expect(try await fixture.engine.entries().allSatisfy { !$0.isGap })
    }

    /// Page-position filters (a third of each page dropped after paging) hide different statuses on different
    /// pages, so there is no single server view: the cache must still be ordered, duplicate-free, gap-free and
    /// reach both ends.
    @Test func pagesShortenedByFiltersStillReachBothEnds() async throws {
        var variant = MastodonSandboxVariant.mastodon
        variant.filtersPages = true
        let fixture = try await EngineFixture(variant: variant, pageLimit: 7)
        let posted = await fixture.postMany(40)
        try await fixture.syncToTheEnd()
        let more = await fixture.postMany(15)
        try await fixture.syncToTheEnd()
        let cached = try await fixture.cachedHome()
        #expect(cached == cached.sorted(by: >))
        #expect(Set(cached).count == cached.count)
        #expect(Set(cached).isSubset(of: Set(posted + more)))
        #expect(cached.first == more.last)
        #expect(cached.last == posted.first)
        #expect(try await fixture.engine.entries().allSatisfy { !$0.isGap })
    }

    @Test func concurrentRefreshesOfOneTimelineSendOneRequest() async throws {
        let fixture = try await EngineFixture()
        await fixture.postMany(5)
        // The sandbox answers after a delay on the test clock, so every caller arrives while the first waits.
        fixture.faults.add(.delay(.seconds(1)), on: .path("/api/v1/timelines/home"), times: 1)
        let engine = fixture.engine
        let callers = Task {
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<20 { group.addTask { try await engine.refresh().inserted } }
                return try await group.reduce(0, +)
            }
        }
        await fixture.clock.waitForSleepers(1)
        await fixture.clock.advance(by: .seconds(1))
        _ = try await callers.value
        #expect(fixture.requests("/api/v1/timelines/home") == 1)
        #expect(try await fixture.cachedHome().count == 5)
    }

    @Test func anAllFilteredRefreshPageDoesNotStallTheNextRefresh() async throws {
        var variant = MastodonSandboxVariant.mastodon
        variant.hiddenKeyword = "spoiler"
        let fixture = try await EngineFixture(variant: variant, pageLimit: 3)
        await fixture.postMany(2)
        try await fixture.engine.refresh()
        // More hidden posts than a page holds, then one the reader can see.
        await fixture.postMany(5, content: "spoiler")
        let visible = await fixture.postMany(1, content: "visible")
        try await fixture.engine.refresh()  // three hidden rows: nothing shown, the cursor moves past them
        try await fixture.engine.refresh()  // two hidden rows and the visible one
        try await fixture.syncToTheEnd()
        let cached = try await fixture.cachedHome()
        #expect(cached.first == visible.first)
        #expect(cached == (try await fixture.serverHome()))
    }

    @Test func aServerErrorChangesNothingAndTheNextRefreshCompletes() async throws {
        let fixture = try await EngineFixture()
        await fixture.postMany(3)
        fixture.faults.add(.status(500), on: .path("/api/v1/timelines/home"), times: 1)
        await #expect(throws: MastodonError.server) { try await fixture.engine.refresh() }
        #expect(try await fixture.engine.entries().isEmpty)
        fixture.faults.add(.dropMidResponse, on: .path("/api/v1/timelines/home"), times: 1)
        await #expect(throws: MastodonError.transport) { try await fixture.engine.refresh() }
        try await fixture.engine.refresh()
        #expect(try await fixture.cachedHome().count == 3)
    }

    @Test func aRateLimitIsATypedErrorWithItsRetryAfter() async throws {
        let fixture = try await EngineFixture()
        fixture.faults.add(.tooManyRequests(retryAfterSeconds: 42), on: .path("/api/v1/timelines/home"), times: 1)
        do {
            try await fixture.engine.refresh()
            Issue.record("expected a rate limit")
        } catch let error as MastodonError {
            #expect(error == .rateLimited)
            #expect(error.retryAfterSeconds == 42)
        }
    }

    @Test func aRefusedTokenIsToldOnceAndNothingMoreIsSent() async throws {
        let fixture = try await EngineFixture()
        let client = MastodonAPIClient(
            server: URL(string: "https://sandbox.invalid")!, accountKey: "mallory@sandbox",
            authorization: MastodonAuthorization(token: "revoked"),
            transport: MastodonSandboxTransport(server: fixture.http))
        let engine = MastodonAccountEngine(client: client, store: fixture.store, clock: fixture.clock)
        var changes = engine.changes().makeAsyncIterator()
        await #expect(throws: MastodonError.unauthorized) { try await engine.refresh() }
        #expect(await changes.next() == .needsReauthentication)
        let before = fixture.log.entries.count
        await #expect(throws: MastodonError.needsReauthentication) { try await engine.pollUnreadCount() }
        await #expect(throws: MastodonError.needsReauthentication) { try await engine.pollNotifications() }
        #expect(fixture.log.entries.count == before)
        // Signing in again resumes.
        client.authorization.signIn(token: "alice-token")
        try await engine.refresh()
    }

    @Test func accountsOnOneOrSeveralHostsKeepTheirOwnTimelines() async throws {
        let fixture = try await EngineFixture()
        await fixture.server.post(as: fixture.alice, "from alice")
        await fixture.postMany(2)
        // Bob on the same host, sharing the store.
        let bobEngine = try await EngineFixture.engine(
            http: fixture.http, store: fixture.store, clock: fixture.clock, token: "bob-token", account: "bob@sandbox")
        // Carol on another host, same store.
        let other = MastodonSandboxServer()
        let carol = await other.addAccount(username: "carol", token: "carol-token")
        await other.post(as: carol, "from the other host")
        let carolEngine = try await EngineFixture.engine(
            http: other.httpServer(clock: fixture.clock), store: fixture.store, clock: fixture.clock,
            token: "carol-token", account: "carol@other", server: URL(string: "https://other.invalid")!)
        try await fixture.engine.refresh()
        try await bobEngine.refresh()
        try await carolEngine.refresh()
        #expect(try await fixture.engine.entries().count == 3)  // alice follows bob
        #expect(try await bobEngine.entries().count == 2)  // bob follows nobody
        #expect(try await carolEngine.entries().count == 1)
        #expect(try await carolEngine.status(carolEngine.entries()[0].statusID!)?.content == "from the other host")
    }

    @Test func thePublicTimelineIsItsOwnKey() async throws {
        let fixture = try await EngineFixture()
        await fixture.postMany(4)
        try await fixture.engine.refresh("public")
        #expect(try await fixture.engine.entries("public").count == 4)
        #expect(try await fixture.engine.entries("home").isEmpty)
        await #expect(throws: MastodonError.unsupported) { try await fixture.engine.refresh("bookmarks") }
    }
}
