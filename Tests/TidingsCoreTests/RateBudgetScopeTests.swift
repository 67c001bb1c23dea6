import Foundation
import Testing

@testable import TidingsCore

/// Server-signalled limits bind the (host, account, family) they came from; the host's politeness
/// bucket binds everyone on the host.
@Suite(.timeLimit(.minutes(1))) struct RateBudgetScopeTests {
    static let host = "mastodon.example"

    /// Whether one acquisition in `scope` is still waiting after the clock had the chance to run it.
    func isPending(_ fixture: BudgetFixture, account: String?, family: RateLimitFamily) async
        -> (Task<Void, any Error>, Bool)
    {
        let finished = Flag()
        let task = Task {
            try await fixture.budget.acquire(host: Self.host, account: account, family: family)
            await finished.set()
        }
        await fixture.clock.advance()
        _ = await fixture.clock.waitForSleepers(1, maxYields: 1000)
        return (task, await !finished.value)
    }

    @Test func oneAccountsExhaustedUploadsDoNotBlockAnotherAccountsTimeline() async throws {
        let fixture = BudgetFixture()
        let reset = RateBudgetServerDelayTests.iso8601(fixture.wallNow.addingTimeInterval(1800))
        await fixture.budget.record(
            RateLimitSignal(statusCode: 429, limit: "30", remaining: "0", reset: reset), host: Self.host,
            account: "alice", family: .mediaUploads)

        // Everything else on the host goes at once.
        try await fixture.budget.acquire(host: Self.host, account: "bob", family: .default)
        try await fixture.budget.acquire(host: Self.host, account: "bob", family: .mediaUploads)
        try await fixture.budget.acquire(host: Self.host, account: "alice", family: .default)
        try await fixture.budget.acquire(host: Self.host)
        #expect(fixture.clock.now.offset == .zero)
        #expect(await fixture.budget.status(host: Self.host, account: "bob", family: .default).blockedFor == .zero)

        // Alice's uploads wait for the reset.
        let status = await fixture.budget.status(host: Self.host, account: "alice", family: .mediaUploads)
        #expect(status.blockedFor == .seconds(1800))
        let (upload, pending) = await isPending(fixture, account: "alice", family: .mediaUploads)
        #expect(pending)
        try await fixture.clock.run(until: upload)
        #expect(fixture.clock.now.offset == .seconds(1800))
    }

    @Test func a429ForOneAccountLeavesOtherAccountsAlone() async throws {
        let fixture = BudgetFixture()
        await fixture.budget.record(
            RateLimitSignal(statusCode: 429, retryAfter: "120"), host: Self.host, account: "alice", family: .default)
        #expect(await fixture.budget.status(host: Self.host).blockedFor == .zero, "the host-wide scope is untouched")
        try await fixture.budget.acquire(host: Self.host, account: "bob")
        #expect(fixture.clock.now.offset == .zero)
        let (alice, pending) = await isPending(fixture, account: "alice", family: .default)
        #expect(pending)
        try await fixture.clock.run(until: alice)
        #expect(fixture.clock.now.offset == .seconds(120))
    }

    @Test func accountsAndHostNamesAreMatchedExactlyAndCaseInsensitivelyRespectively() async {
        let fixture = BudgetFixture()
        await fixture.budget.record(
            RateLimitSignal(statusCode: 429, retryAfter: "60"), host: "Mastodon.Example", account: "alice",
            family: .default)
        #expect(await fixture.budget.status(host: Self.host, account: "alice").blockedFor == .seconds(60))
        #expect(await fixture.budget.status(host: Self.host, account: "Alice").blockedFor == .zero)
        #expect(await fixture.budget.status(host: Self.host, account: nil).blockedFor == .zero)
    }

    @Test func theHostsPolitenessBucketIsSharedByEveryScope() async throws {
        let fixture = BudgetFixture(.init(requestsPerWindow: 2, window: .seconds(10)))
        try await fixture.budget.acquire(host: Self.host, account: "alice", family: .default)
        try await fixture.budget.acquire(host: Self.host, account: "bob", family: .mediaUploads)
        let (carol, pending) = await isPending(fixture, account: "carol", family: .statusDeletions)
        #expect(pending)
        try await fixture.clock.run(until: carol)
        #expect(fixture.clock.now.offset == .seconds(5))
    }

    @Test func anUnavailableHostHoldsEveryScope() async throws {
        let fixture = BudgetFixture()
        await fixture.budget.record(
            RateLimitSignal(statusCode: 503, retryAfter: "60"), host: Self.host, account: "alice", family: .default)
        #expect(await fixture.budget.status(host: Self.host, account: "bob").blockedFor == .seconds(60))
        let (bob, pending) = await isPending(fixture, account: "bob", family: .default)
        #expect(pending)
        try await fixture.clock.run(until: bob)
        #expect(fixture.clock.now.offset == .seconds(60))
    }

    @Test func mediaUploadsHaveTheirOwnDocumentedBudget() async throws {
        let fixture = BudgetFixture()
        for _ in 0..<30 { try await fixture.budget.acquire(host: Self.host, account: "alice", family: .mediaUploads) }
        #expect(fixture.clock.now.offset == .zero, "30 uploads go at once")
        // Timeline requests are not slowed by the uploads' budget.
        for _ in 0..<10 { try await fixture.budget.acquire(host: Self.host, account: "alice", family: .default) }
        #expect(fixture.clock.now.offset == .zero)
        // The 31st upload waits for a refill: 30 per 30 minutes is one a minute.
        let (upload, pending) = await isPending(fixture, account: "alice", family: .mediaUploads)
        #expect(pending)
        try await fixture.clock.run(until: upload)
        #expect(fixture.clock.now.offset == .seconds(60))
    }

    @Test func theHostOnlyAPIIsTheAccountlessDefaultScope() async {
        let fixture = BudgetFixture()
        await fixture.budget.record(RateLimitSignal(statusCode: 429, retryAfter: "90"), host: Self.host)
        #expect(await fixture.budget.status(host: Self.host, account: nil, family: .default).blockedFor == .seconds(90))
        #expect(await fixture.budget.status(host: Self.host, account: "alice").blockedFor == .zero)
    }
}
