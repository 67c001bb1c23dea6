import Foundation
import TidingsCore
import TidingsMastodon
import TidingsNet
import TidingsSandbox
import TidingsSandboxKit

/// A sandbox with a reader (`alice`, token `alice-token`) following an author (`bob`), reachable in process.
struct MastodonSandboxFixture {
    static let epoch = Date(timeIntervalSince1970: 1_700_000_000)
    let clock = TestClock()
    let server: MastodonSandboxServer
    let http: SandboxHTTPServer
    let alice: String
    let bob: String

    init(variant: MastodonSandboxVariant = .mastodon) async {
        let clock = self.clock
        let now: @Sendable () -> Date = { Self.epoch.addingTimeInterval(Double(clock.now.offset.components.seconds)) }
        server = MastodonSandboxServer(variant: variant, now: now)
        http = server.httpServer(clock: clock)
        alice = await server.addAccount(username: "alice", token: "alice-token")
        bob = await server.addAccount(username: "bob", token: "bob-token")
        await server.follow(alice, bob)
    }

    var now: @Sendable () -> Date {
        let clock = clock
        return { Self.epoch.addingTimeInterval(Double(clock.now.offset.components.seconds)) }
    }

    func client(token: String = "alice-token", budget: RateBudget? = nil) -> MastodonAPIClient {
        MastodonAPIClient(
            server: URL(string: "https://sandbox.invalid")!, accountKey: "alice@sandbox",
            authorization: MastodonAuthorization(token: token), transport: MastodonSandboxTransport(server: http),
            budget: budget, now: now)
    }

    /// Posts `count` statuses as bob; their IDs oldest first.
    func postMany(_ count: Int) async -> [ServerID] {
        var ids: [ServerID] = []
        for index in 0..<count { ids.append(ServerID(await server.post(as: bob, "post \(index)"))) }
        return ids
    }
}

/// Pages a timeline from the newest to the end by following `Link` alone, as the engine must.
func pageToTheEnd(
    _ client: MastodonAPIClient, limit: Int
) async throws -> (ids: [ServerID], requests: Int, shortPagesWithMore: Int) {
    var range: MastodonPageRange? = MastodonPageRange(limit: limit)
    var ids: [ServerID] = []
    var requests = 0
    var shortPagesWithMore = 0
    while let current = range, requests < 100 {
        let page = try await client.homeTimeline(current)
        requests += 1
        ids += page.items.map(\.id)
        if page.items.count < limit, page.older != nil { shortPagesWithMore += 1 }
        range = page.older
    }
    return (ids, requests, shortPagesWithMore)
}
