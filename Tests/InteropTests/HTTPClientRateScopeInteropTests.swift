import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsNet

/// The HTTP client draws on, and informs, the rate budget of each request's own account and family.
@Suite(.timeLimit(.minutes(1))) struct HTTPClientRateScopeInteropTests {
    @Test func oneAccounts429LeavesAnotherAccountsRequestsAlone() async throws {
        let peer = try await PythonPeer.start("http_peer.py")
        defer { peer.stop() }
        let clock = TestClock()
        let budget = RateBudget(clock: clock)
        let client = HTTPClient(configuration: .init(rateBudget: budget, clock: clock))
        let base = "http://127.0.0.1:\(peer.port)"

        var alice = HTTPRequest(url: URL(string: base + "/ratelimited")!)
        alice.rateLimitAccount = "alice"
        let limited = try await client.response(for: alice)
        #expect(limited.status == 429)
        #expect(limited.rateLimitSignal.date != nil, "the server's Date header reaches the budget")
        #expect(await budget.status(host: "127.0.0.1", account: "alice").blockedFor == .seconds(120))
        #expect(await budget.status(host: "127.0.0.1", account: "bob").blockedFor == .zero)

        // Bob's request goes at once: the test clock never moves.
        var bob = HTTPRequest(url: URL(string: base + "/cookies")!)
        bob.rateLimitAccount = "bob"
        #expect(try await client.send(bob).status == 200)
        #expect(clock.now.offset == .zero)

        // Alice's next request waits for the virtual clock.
        alice.url = URL(string: base + "/cookies")!
        let next = Task { try await client.send(alice) }
        #expect(await clock.waitForSleepers(1))
        await clock.advance(by: .seconds(119))
        #expect(clock.pendingSleepers == 1)
        await clock.advance(by: .seconds(1))
        #expect(try await next.value.status == 200)
    }
}
