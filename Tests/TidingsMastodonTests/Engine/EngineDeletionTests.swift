import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox
import TidingsSandboxKit

/// Deletions learnt by asking again: 404 on refetch, and re-checks of cached statuses (batched on 4.3+, one by
/// one before).
@Suite(.timeLimit(.minutes(1)))
struct EngineDeletionTests {
    @Test func aRefetchThatFindsNothingRemovesTheStatusAndItsEntries() async throws {
        let fixture = try await EngineFixture()
        let ids = await fixture.postMany(3)
        try await fixture.engine.refresh()
        try await fixture.engine.refresh("public")
        await fixture.server.delete(ids[1].rawValue)
        #expect(try await fixture.engine.refetchStatus(ids[1]) == nil)
        #expect(try await fixture.cachedHome() == [ids[2], ids[0]])
        #expect(try await fixture.engine.entries("public").compactMap(\.statusID).contains(ids[1]) == false)
        // A page fetched before the deletion cannot bring it back.
        try await fixture.engine.refresh()
        #expect(try await fixture.engine.status(ids[1]) == nil)
    }

    @Test func onMastodon43ARecheckAsksInBatchesOfTwenty() async throws {
        let fixture = try await EngineFixture(pageLimit: 40)
        let ids = await fixture.postMany(45)
        try await fixture.syncToTheEnd()
        for index in [3, 17, 30, 44] { await fixture.server.delete(ids[index].rawValue) }
        let before = fixture.requests("/api/v1/statuses")
        let deleted = try await fixture.engine.recheckCachedStatuses(limit: 45)
        #expect(Set(deleted) == Set([3, 17, 30, 44].map { ids[$0] }))
        #expect(fixture.requests("/api/v1/statuses") - before == 3)
        #expect(try await fixture.cachedHome() == (try await fixture.serverHome()))
    }

    @Test(arguments: ["pleroma", "nextcloud"])
    func olderServersAreRecheckedOneStatusAtATime(_ name: String) async throws {
        let fixture = try await EngineFixture(variant: name == "pleroma" ? .pleroma : .nextcloud)
        let ids = await fixture.postMany(5)
        try await fixture.syncToTheEnd()
        await fixture.server.delete(ids[2].rawValue)
        let deleted = try await fixture.engine.recheckCachedStatuses()
        #expect(deleted == [ids[2]])
        #expect(fixture.log.entries.filter { $0.path == "/api/v1/statuses" }.isEmpty)
        #expect(fixture.requests("/api/v1/statuses/") == 5)
        #expect(try await fixture.cachedHome() == (try await fixture.serverHome()))
    }

    @Test func aFailedRecheckDeletesNothing() async throws {
        let fixture = try await EngineFixture()
        let ids = await fixture.postMany(3)
        try await fixture.engine.refresh()
        await fixture.server.delete(ids[0].rawValue)
        fixture.faults.add(.status(500), on: .path("/api/v1/statuses"), times: 1)
        await #expect(throws: MastodonError.server) { try await fixture.engine.recheckCachedStatuses() }
        #expect(try await fixture.cachedHome().count == 3)
        #expect(try await fixture.engine.recheckCachedStatuses() == [ids[0]])
    }

    @Test func rechecksWaitForTheRateBudgetAfterA429() async throws {
        let fixture = try await EngineFixture()
        let ids = await fixture.postMany(3)
        try await fixture.engine.refresh()
        await fixture.server.delete(ids[0].rawValue)
        let (engine, _) = try await fixture.budgetedEngine()
        fixture.faults.add(.tooManyRequests(retryAfterSeconds: 60), on: .path("/api/v1/statuses"), times: 1)
        await #expect(throws: MastodonError.rateLimited) { try await engine.recheckCachedStatuses() }
        let before = fixture.requests("/api/v1/statuses")
        let recheck = Task { try await engine.recheckCachedStatuses() }
        await fixture.clock.waitForSleepers(1)
        #expect(fixture.requests("/api/v1/statuses") == before)
        await fixture.clock.advance(by: .seconds(60))
        #expect(try await recheck.value == [ids[0]])
    }
}
