import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox
import TidingsSandboxKit

/// The debounced marker post waits for the network path: nothing is sent while it is unsatisfied, and one
/// post (of the maximum read) goes out when it returns.
@Suite(.timeLimit(.minutes(1)))
struct MastodonSyncOfflineMarkerTests {
    private static let alice = "alice@sandbox"

    @Test func theDebouncedMarkerWaitsForThePathThenPostsOnceTheMaximum() async throws {
        let fixture = try await MastodonSyncTests.Fixture()
        let base = fixture.base
        let ids = await base.postMany(4)
        let engine = await fixture.add("alice-token", Self.alice)
        try await engine.refresh()

        await fixture.sync.appStateChanged(.networkPath(.offline))
        // Offline: the sandbox refuses every connection, so a post that went out would fail and be lost.
        base.faults.add(.close(code: 1001))
        #expect(try await engine.markRead(.home, upTo: ids[2]))
        #expect(try await engine.markRead(.home, upTo: ids[1]) == false, "never backwards")
        await base.clock.waitForSleepers(1)
        await base.clock.advance(by: .seconds(10))
        #expect(await eventually { await engine.markerPostWaitsForPath })
        await base.clock.advance(by: .seconds(60))
        #expect(await engine.markerPostCount == 0)
        #expect(base.requests("/api/v1/markers", method: "POST") == 0)
        #expect(try await engine.markRead(.home, upTo: ids[3]))

        base.faults.clear()
        await fixture.sync.appStateChanged(.networkPath(.wifi))
        let otherDevice = fixture.client("alice-token", "alice-other-device")
        #expect(await eventually { (try? await otherDevice.markers().home?.lastReadID) == ids[3] })
        #expect(await eventually { await engine.markerPostCount == 1 })
        #expect(base.requests("/api/v1/markers", method: "POST") == 1)
        #expect(await engine.markerPostWaitsForPath == false)
        await fixture.sync.shutdown()
    }
}
