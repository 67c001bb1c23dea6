import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox
import TidingsSandboxKit

/// One marker post at a time: a post asked for while another is in flight waits for it and sends only what is
/// still ahead of the server.
@Suite(.timeLimit(.minutes(1)))
struct MarkerPostInFlightTests {
    @Test func theBackgroundPostWaitsForTheDebouncedOneInFlightAndSendsNothingTwice() async throws {
        let fixture = try await EngineFixture()
        let ids = await fixture.postMany(3)
        let engine = fixture.engine
        try await engine.refresh()
        try await engine.syncMarkers()
        #expect(try await engine.markRead(.home, upTo: ids[2]))
        // The server holds the debounced post for 5 virtual seconds.
        fixture.faults.add(.delay(.seconds(5)), on: .path("/api/v1/markers", method: "POST"), times: 1)
        await fixture.clock.waitForSleepers(1)
        await fixture.clock.advance(by: .seconds(10))
        let faults = fixture.faults
        #expect(await eventually { faults.faults.rules.allSatisfy { $0.times == 0 } })

        // The app goes to the background while that post is in flight.
        let done = LockedState(false)
        let background = Task {
            defer { done.withLock { $0 = true } }
            try await engine.enterBackground()
        }
        for _ in 0..<60 where !done.withLock({ $0 }) {
            _ = await eventually { done.withLock { $0 } || fixture.clock.pendingSleepers > 0 }
            await fixture.clock.advance(by: .seconds(1))
        }
        try await background.value
        #expect(fixture.requests("/api/v1/markers", method: "POST") == 1)
        #expect(await engine.markerPostCount == 1)
        let other = MastodonAPIClient(
            server: URL(string: "https://sandbox.invalid")!, accountKey: "alice-other-device",
            authorization: MastodonAuthorization(token: "alice-token"),
            transport: MastodonSandboxTransport(server: fixture.http))
        #expect(try await other.markers().home?.lastReadID == ids[2])
    }
}
