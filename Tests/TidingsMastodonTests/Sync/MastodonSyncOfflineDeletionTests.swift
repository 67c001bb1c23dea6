import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox
import TidingsSandboxKit

/// Mastodon tells deletions only over the stream, so a status deleted while the app was offline is found by
/// the re-check that the network's return and the foreground run (at most once per re-check interval), not only
/// in the platform's maintenance window.
@Suite(.timeLimit(.minutes(1)))
struct MastodonSyncOfflineDeletionTests {
    private static let alice = "alice@sandbox"

    @Test func aStatusDeletedWhileOfflineGoesWhenTheNetworkReturns() async throws {
        let fixture = try await MastodonSyncTests.Fixture()
        let base = fixture.base
        let sync = fixture.sync
        let ids = await base.postMany(3)
        let engine = await fixture.add("alice-token", Self.alice)
        try await engine.refresh()

        await sync.appStateChanged(.networkPath(.offline))
        base.faults.add(.close(code: 1001))
        #expect(await base.server.delete(ids[1].rawValue))
        base.faults.clear()
        await sync.appStateChanged(.networkPath(.wifi))
        await sync.housekeepingSettled()
        let cached = try await engine.entries().compactMap(\.statusID)
        #expect(cached == [ids[0], ids[2]])
        #expect(base.requests("/api/v1/statuses") == 1, "one batch of ids on Mastodon 4.3+")

        // Within the interval the next return asks nothing; after it, the foreground re-checks again.
        #expect(await base.server.delete(ids[2].rawValue))
        await sync.appStateChanged(.networkPath(.offline))
        await sync.appStateChanged(.networkPath(.wifi))
        await sync.housekeepingSettled()
        #expect(base.requests("/api/v1/statuses") == 1)
        #expect(try await engine.entries().compactMap(\.statusID) == [ids[0], ids[2]])
        await base.clock.advance(by: MastodonMaintenancePolicy().recheckInterval)
        await sync.appStateChanged(.foreground(false))
        await sync.appStateChanged(.foreground(true))
        await sync.housekeepingSettled()
        #expect(base.requests("/api/v1/statuses") == 2)
        #expect(try await engine.entries().compactMap(\.statusID) == [ids[0]])
        await sync.shutdown()
    }

    @Test func withoutTheBatchEndpointEachStatusIsAskedAndA404Removes() async throws {
        let fixture = try await MastodonSyncTests.Fixture(variant: .pleroma)
        let base = fixture.base
        let ids = await base.postMany(2)
        let engine = await fixture.add("alice-token", Self.alice)
        try await engine.refresh()
        await fixture.sync.appStateChanged(.networkPath(.offline))
        #expect(await base.server.delete(ids[0].rawValue))
        await fixture.sync.appStateChanged(.networkPath(.wifi))
        await fixture.sync.housekeepingSettled()
        #expect(try await engine.entries().compactMap(\.statusID) == [ids[1]])
        await fixture.sync.shutdown()
    }
}
