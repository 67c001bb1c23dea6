import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsNet
import TidingsSandbox
import TidingsSandboxKit

/// Tokens, rate limits, markers, actions, edits and deletes against the sandbox, in process and on loopback.
@Suite(.timeLimit(.minutes(1)))
struct MastodonSandboxSemanticsTests {
    @Test func unknownTokenNeedsReauthentication() async throws {
        let fixture = await MastodonSandboxFixture()
        let client = fixture.client(token: "revoked")
        await #expect(throws: MastodonError.unauthorized) { try await client.homeTimeline() }
        await #expect(throws: MastodonError.needsReauthentication) { try await client.notifications() }
        #expect(fixture.http.log.entries.count == 1)
        client.authorization.signIn(token: "alice-token")
        _ = try await client.homeTimeline()
    }

    @Test func aSpentWindowPausesTheAccountUntilItsReset() async throws {
        var variant = MastodonSandboxVariant()
        variant.requestsPerWindow = 3
        let fixture = await MastodonSandboxFixture(variant: variant)
        let budget = RateBudget(configuration: .mastodon, clock: fixture.clock, wallClock: fixture.now, random: { 0.5 })
        let client = fixture.client(budget: budget)
        for _ in 0..<3 { _ = try await client.homeTimeline() }
        // The third answer said X-RateLimit-Remaining: 0, so the fourth waits for X-RateLimit-Reset.
        let next = Task { try await client.homeTimeline() }
        #expect(await fixture.clock.waitForSleepers())
        await fixture.clock.advance(by: .seconds(299))
        #expect(fixture.http.log.entries.count == 3)
        await fixture.clock.advance(by: .seconds(1))
        _ = try await next.value
        #expect(fixture.http.log.entries.map(\.status) == [200, 200, 200, 200])
    }

    @Test func aClientWithoutABudgetGetsTheServers429() async throws {
        var variant = MastodonSandboxVariant()
        variant.requestsPerWindow = 2
        let fixture = await MastodonSandboxFixture(variant: variant)
        let client = fixture.client()
        for _ in 0..<2 { _ = try await client.homeTimeline() }
        do {
            _ = try await client.homeTimeline()
            Issue.record("expected a 429")
        } catch let error as MastodonError {
            #expect(error == .rateLimited)
            #expect(error.retryAfterSeconds == 300)
        }
        // Another account's window is its own.
        _ = try await fixture.client(token: "bob-token").homeTimeline()
    }

    @Test func tooManyRequestsHoldsTheAccountUntilRetryAfter() async throws {
        let fixture = await MastodonSandboxFixture()
        let budget = RateBudget(configuration: .mastodon, clock: fixture.clock, wallClock: fixture.now, random: { 0.5 })
        let client = fixture.client(budget: budget)
        fixture.http.faults.add(.tooManyRequests(retryAfterSeconds: 30), on: .path("/api/v1/timelines/home"), times: 1)
        do {
            _ = try await client.homeTimeline()
            Issue.record("expected a 429")
        } catch let error as MastodonError {
            #expect(error == .rateLimited)
            #expect(error.retryAfterSeconds == 30)
        }
        let next = Task { try await client.homeTimeline() }
        #expect(await fixture.clock.waitForSleepers())
        await fixture.clock.advance(by: .seconds(29))
        #expect(fixture.http.log.entries.count == 1)
        await fixture.clock.advance(by: .seconds(1))
        _ = try await next.value
        #expect(fixture.http.log.entries.map(\.status) == [429, 200])
    }

    @Test func markersHaveVersionsAndConflicts() async throws {
        let fixture = await MastodonSandboxFixture()
        let client = fixture.client()
        #expect(try await client.markers() == MastodonMarkers())
        let first = try await client.saveMarkers(home: "100", notifications: "7")
        #expect(first.home?.version == 1)
        await fixture.server.conflictNextMarkerSaves(1)
        await #expect(throws: MastodonError.conflict) { try await client.saveMarkers(home: "120") }
        let second = try await client.saveMarkers(home: "120")
        #expect(second.home?.lastReadID == "120")
        #expect(second.home?.version == 2)
        let read = try await client.markers()
        #expect(read.notifications?.lastReadID == "7")
        #expect(read.home?.version == 2)
    }

    @Test func actionsEditsDeletesAndStatusesByID() async throws {
        let fixture = await MastodonSandboxFixture()
        let client = fixture.client()
        let ids = await fixture.postMany(3)
        #expect(try await client.perform(.favourite, status: ids[0]).favourited == true)
        #expect(try await client.perform(.bookmark, status: ids[0]).bookmarked == true)
        let boost = try await client.perform(.reblog, status: ids[1])
        #expect(boost.reblog?.id == ids[1])
        #expect(boost.reblog?.reblogged == true)
        #expect(try await client.perform(.unreblog, status: ids[1]).reblogged == false)
        #expect(try await client.perform(.unfavourite, status: ids[0]).favourited == false)
        await fixture.server.edit(ids[2].rawValue, content: "edited")
        let edited = try await client.status(id: ids[2])
        #expect(edited.content == "edited")
        #expect(edited.editedAt != nil)
        await fixture.server.delete(ids[1].rawValue)
        #expect(try await client.statuses(ids: ids).map(\.id) == [ids[0], ids[2]])
        await #expect(throws: MastodonError.notFound) { try await client.status(id: ids[1]) }
        #expect(try await client.setFollowing(false, account: ServerID(fixture.bob)) == false)
        #expect(try await client.homeTimeline().items.isEmpty)
        #expect(try await client.setFollowing(true, account: ServerID(fixture.bob)))
    }

    @Test func notificationsGroupAndCount() async throws {
        let fixture = await MastodonSandboxFixture()
        let carol = await fixture.server.addAccount(username: "carol", token: "carol-token")
        let post = await fixture.server.post(as: fixture.alice, "mine")
        let bobClient = fixture.client(token: "bob-token")
        let carolClient = fixture.client(token: "carol-token")
        _ = try await bobClient.perform(.favourite, status: ServerID(post))
        _ = try await carolClient.perform(.favourite, status: ServerID(post))
        _ = await fixture.server.post(as: carol, "hi @alice", mentioning: [fixture.alice])
        let client = fixture.client()
        let v1 = try await client.notifications()
        #expect(v1.items.map(\.type) == [.mention, .favourite, .favourite])
        #expect(try await client.unreadCount(version1: true) == 3)
        #expect(try await client.unreadCount() == 2)
        let grouped = try await client.groupedNotifications()
        #expect(grouped.results.notificationGroups.map(\.notificationsCount) == [1, 2])
        #expect(grouped.results.notificationGroups.last?.statusID == ServerID(post))
        #expect(
            grouped.results.notificationGroups.last.map { Set($0.sampleAccountIDs) } == [
                ServerID(fixture.bob), ServerID(carol),
            ])
        _ = try await client.saveMarkers(notifications: v1.items[0].id)
        #expect(try await client.unreadCount() == 0)
        // A deleted status takes its notifications with it.
        await fixture.server.delete(post)
        #expect(try await client.notifications().items.map(\.type) == [.mention])
    }

    @Test func faultsReachTheClientAsTypedErrors() async throws {
        let fixture = await MastodonSandboxFixture()
        let client = fixture.client()
        fixture.http.faults.add(.dropMidResponse, on: .path("/api/v1/timelines/home"), times: 1)
        fixture.http.faults.add(.status(503), on: .path("/api/v1/markers"), times: 1)
        fixture.http.faults.add(.malformedBody, on: .path("/api/v1/notifications"), times: 1)
        await #expect(throws: MastodonError.transport) { try await client.homeTimeline() }
        await #expect(throws: MastodonError.server) { try await client.markers() }
        await #expect(throws: MastodonError.decoding) { try await client.notifications() }
        // Each fault was for one request only.
        _ = try await client.homeTimeline()
        _ = try await client.markers()
        _ = try await client.notifications()
        #expect(client.authorization.authState == .signedIn)
    }

    @Test func overLoopbackWithHTTPClient() async throws {
        let fixture = await MastodonSandboxFixture()
        let posted = await fixture.postMany(45)
        let listener = try fixture.http.serve()
        defer { listener.stop() }
        let http = HTTPClient(configuration: .init(timeout: .seconds(20)))
        let client = Self.aliceOverLoopback(listener, http)
        let page = try await client.homeTimeline(MastodonPageRange(limit: 40))
        #expect(page.items.map(\.id) == Array(posted.suffix(40).reversed()))
        let rest = try await client.homeTimeline(try #require(page.older))
        #expect(rest.items.map(\.id) == Array(posted.prefix(5).reversed()))
        #expect(rest.older == nil)
        let capabilities = try await MastodonCapabilities.fetch(with: client)
        #expect(capabilities.source == .version2)
        let refused = MastodonAPIClient(
            server: listener.url, accountKey: "x", authorization: MastodonAuthorization(token: "nope"), transport: http)
        await #expect(throws: MastodonError.unauthorized) { try await refused.markers() }
        #expect(refused.authorization.authState == .needsReauthentication)
    }

    /// Over loopback the URLs the sandbox hands out lead back to it: an app that follows the `Link` header or
    /// opens the advertised stream literally stays on the sandbox (they named `sandbox.invalid` before).
    @Test func handedOutURLsPointAtTheLoopbackOrigin() async throws {
        let fixture = await MastodonSandboxFixture()
        let posted = await fixture.postMany(45)
        let listener = try fixture.http.serve()
        defer { listener.stop() }
        let http = HTTPClient(configuration: .init(timeout: .seconds(20)))
        let client = Self.aliceOverLoopback(listener, http)
        let capabilities = try await MastodonCapabilities.fetch(with: client)
        let streaming = try #require(capabilities.streamingURL)
        #expect(streaming.scheme == "ws")
        #expect(streaming.host == listener.url.host)
        #expect(streaming.port == listener.url.port)

        var first = HTTPRequest(url: listener.url.appendingPathComponent("api/v1/timelines/home"))
        first.headers["Authorization"] = "Bearer alice-token"
        let page = try await http.send(first)
        let next = try #require(page.links["next"])
        #expect(next.host == listener.url.host && next.port == listener.url.port)
        var following = HTTPRequest(url: next)
        following.headers["Authorization"] = "Bearer alice-token"
        let older = try await http.send(following)
        let ids = try #require(try JSONValue(parsing: older.body).arrayValue).compactMap { $0["id"]?.stringValue }
        let expected: ServerID = posted[posted.count - 21]
        #expect(ids.first.map { ServerID($0) } == expected)
    }

    /// Alice's client on `listener`'s loopback URL through `http`.
    static func aliceOverLoopback(_ listener: SandboxHTTPListener, _ http: HTTPClient) -> MastodonAPIClient {
        MastodonAPIClient(
            server: listener.url, accountKey: "alice@loopback",
            authorization: MastodonAuthorization(token: "alice-token"), transport: http)
    }
}
