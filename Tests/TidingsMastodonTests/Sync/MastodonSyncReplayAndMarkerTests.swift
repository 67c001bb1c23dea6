import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox
import TidingsSandboxKit

/// `MastodonSync` replays each account's outbox (launch, network back, foreground) and syncs its markers
/// (launch, foreground; at once on background).
@Suite(.timeLimit(.minutes(1)))
struct MastodonSyncReplayAndMarkerTests {
    private static let alice = "alice@sandbox"

    @Test func anActionPerformedOfflineIsSentOnceWhenThePathReturns() async throws {
        let fixture = try await MastodonSyncTests.Fixture()
        let base = fixture.base
        let engine = await fixture.add("alice-token", Self.alice)
        let id = await base.postMany(1)[0]
        try await engine.refresh()
        await fixture.sync.appStateChanged(.networkPath(.offline))
        base.faults.add(.status(500), on: .path("/api/v1/statuses", method: "POST"))
        try await engine.perform(.bookmark, on: id)
        #expect(try await engine.isPending(id))
        base.faults.clear()

        await fixture.sync.appStateChanged(.networkPath(.wifi))
        await fixture.sync.housekeepingSettled()
        #expect(try await engine.pendingActions().isEmpty)
        #expect(try await engine.client.status(id: id).bookmarked == true)
        // One refused attempt offline, one sent when the path returned; an unchanged path sends nothing more.
        await fixture.sync.appStateChanged(.networkPath(.wifi))
        await fixture.sync.housekeepingSettled()
        #expect(base.requests("/api/v1/statuses/\(id.rawValue)/bookmark", method: "POST") == 2)
        await fixture.sync.shutdown()
    }

    @Test func anActionLeftPendingInTheStoreIsSentAfterRelaunch() async throws {
        let fixture = try await MastodonSyncTests.Fixture()
        let base = fixture.base
        let engine = await fixture.add("alice-token", Self.alice)
        let id = await base.postMany(1)[0]
        try await engine.refresh()
        base.faults.add(.status(500), on: .path("/api/v1/statuses", method: "POST"))
        try await engine.perform(.favourite, on: id)
        #expect(try await engine.isPending(id))
        await fixture.sync.shutdown()
        base.faults.clear()

        // The app launches again over the same store: adding the account sends what was left pending.
        let relaunched = MastodonSync(clock: base.clock, settings: MastodonPollSettings(preset: .manual))
        let again = await relaunched.addAccount(client: fixture.client("alice-token", Self.alice), store: base.store)
        #expect(try await again.pendingActions().isEmpty)
        #expect(try await again.client.status(id: id).favourited == true)
        await relaunched.shutdown()
    }

    @Test func foregroundReadsTheServersMarkers() async throws {
        let fixture = try await MastodonSyncTests.Fixture()
        let base = fixture.base
        let ids = await base.postMany(3)
        let engine = await fixture.add("alice-token", Self.alice)
        await fixture.sync.appStateChanged(.foreground(false))
        // Another device reads on while this app is in the background.
        let otherDevice = fixture.client("alice-token", "alice-other-device")
        _ = try await otherDevice.saveMarkers(home: ids[1])
        #expect(try await engine.localMarker(.home) == nil)

        await fixture.sync.appStateChanged(.foreground(true))
        await fixture.sync.housekeepingSettled()
        #expect(try await engine.localMarker(.home) == ids[1])
        await fixture.sync.shutdown()
    }

    @Test func backgroundPostsThePendingMarkerAtOnce() async throws {
        let fixture = try await MastodonSyncTests.Fixture()
        let base = fixture.base
        let ids = await base.postMany(3)
        let engine = await fixture.add("alice-token", Self.alice)
        try await engine.refresh()
        #expect(try await engine.markRead(.home, upTo: ids[2]))
        #expect(await engine.markerPostCount == 0)

        // No clock advance: the debounce has not run, the background post goes out now.
        await fixture.sync.appStateChanged(.foreground(false))
        await fixture.sync.housekeepingSettled()
        #expect(await engine.markerPostCount == 1)
        #expect(try await fixture.client("alice-token", "alice-other-device").markers().home?.lastReadID == ids[2])
        await fixture.sync.shutdown()
    }
}
