import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox
import TidingsSandboxKit

/// An account added while the server cannot be reached (an offline launch) has no capabilities, filters or
/// server markers; the network's return and the foreground fetch what the launch missed, so the stream opens.
@Suite(.timeLimit(.minutes(1)))
struct MastodonSyncOfflineLaunchTests {
    private static let alice = "alice@sandbox"

    /// `toldOffline`: whether the app reported the unsatisfied path before the launch (a path monitor usually
    /// does; one that reports late leaves the sync object believing it is online).
    @Test(arguments: [true, false])
    func theNetworksReturnFetchesWhatAnOfflineLaunchMissed(toldOffline: Bool) async throws {
        let fixture = try await MastodonSyncTests.Fixture()
        let base = fixture.base
        let sync = fixture.sync
        let ids = await base.postMany(3)
        // Another device read up to the second post: the launch should learn it from the server.
        _ = try await fixture.client("alice-token", "alice-other-device").saveMarkers(home: ids[1])
        await sync.appStateChanged(.activeAccount(Self.alice))
        if toldOffline { await sync.appStateChanged(.networkPath(.offline)) }
        base.faults.add(.close(code: 1001))
        let engine = await fixture.add("alice-token", Self.alice)
        #expect(await engine.filters() == nil)
        #expect(try await engine.localMarker(.home) == nil)
        #expect(await sync.streamState(for: Self.alice) == .stopped)

        base.faults.clear()
        await sync.appStateChanged(.networkPath(.wifi))
        await sync.housekeepingSettled()
        #expect(await fixture.streamIs(Self.alice, .open))
        #expect(try await engine.localMarker(.home) == ids[1])
        #expect(await engine.filters() != nil)
        #expect(base.requests("/api/v1/markers") == 1)
        await sync.shutdown()
    }

    @Test func theForegroundFetchesWhatAnOfflineLaunchMissed() async throws {
        let fixture = try await MastodonSyncTests.Fixture()
        let base = fixture.base
        let sync = fixture.sync
        await sync.appStateChanged(.activeAccount(Self.alice))
        await sync.appStateChanged(.foreground(false))
        base.faults.add(.status(503))
        let engine = await fixture.add("alice-token", Self.alice)
        #expect(await engine.filters() == nil)

        base.faults.clear()
        await sync.appStateChanged(.foreground(true))
        await sync.housekeepingSettled()
        #expect(await fixture.streamIs(Self.alice, .open))
        #expect(await engine.filters() != nil)
        #expect(base.requests("/api/v1/markers") == 1)
        // Known from now on: a second return fetches them no more.
        let instances = base.requests("/api/v2/instance")
        await sync.appStateChanged(.foreground(false))
        await sync.appStateChanged(.foreground(true))
        await sync.housekeepingSettled()
        #expect(base.requests("/api/v2/instance") == instances)
        await sync.shutdown()
    }
}
