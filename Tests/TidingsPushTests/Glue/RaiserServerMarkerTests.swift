import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsPush

/// The background paths learn the server's notifications marker before they decide: a notification read on
/// another device (which posted the marker to the server) is not raised by a background poll or job.
@Suite(.timeLimit(.minutes(1))) struct RaiserServerMarkerTests {
    /// alice's other device: same account and token, a client of its own.
    private func otherDevice(_ fixture: GlueFixture) -> MastodonAPIClient {
        GlueFixture.client(fixture.http, token: "alice-token", account: "alice-phone")
    }

    /// The newest notification the server lists for alice, as her other device sees it.
    private func newestNotification(_ fixture: GlueFixture) async throws -> ServerID {
        try #require(try await otherDevice(fixture).notifications().items.map(\.id).max())
    }

    @Test func whatAnotherDeviceReadDuringQuietHoursIsNotRaisedAtTheirEnd() async throws {
        let fixture = try await GlueFixture(
            configuration: NotificationRaiserConfiguration(
                settings: NotificationSettings(quietHours: RaiserTimeTests.night)))
        await fixture.server.post(as: fixture.bob, "late @alice", mentioning: [fixture.alice])
        #expect(try await fixture.raiser.pollAndRaise().map(\.label) == ["hold:quietHours"])
        // Read on the phone during the night: the phone posts the marker; this device never synced markers.
        let read = try await newestNotification(fixture)
        _ = try await otherDevice(fixture).saveMarkers(notifications: read)
        await fixture.clock.advance(by: .seconds(8 * 3600))
        let released = try await fixture.raiser.releaseHeld()
        #expect(released.decisions.filter { $0.decision.request != nil }.isEmpty)
        #expect(released.decisions.allSatisfy { $0.label == "drop:coveredByMarker" })
        #expect(try await fixture.engine.localMarker(.notifications) == read)
        #expect(fixture.board.badge == 0)
    }

    @Test func aBackgroundPollDoesNotRaiseWhatAnotherDeviceRead() async throws {
        let fixture = try await GlueFixture()
        await fixture.server.post(as: fixture.bob, "first @alice", mentioning: [fixture.alice])
        #expect(try await fixture.raiser.pollAndRaise().map(\.label) == ["raise"])
        await fixture.server.post(as: fixture.carol, "second @alice", mentioning: [fixture.alice])
        _ = try await otherDevice(fixture).saveMarkers(notifications: try await newestNotification(fixture))
        let decisions = try await fixture.raiser.pollAndRaise()
        #expect(decisions.filter { $0.decision.request != nil }.isEmpty)
        // One GET of the markers, nothing posted: this device had read nothing beyond the server.
        let markerRequests = fixture.sent.withLock { $0 }.filter { $0.hasSuffix("/api/v1/markers") }
        #expect(markerRequests == ["GET /api/v1/markers", "GET /api/v1/markers"])
    }

    @Test func anAccountTheRateBudgetHoldsIsNotAskedAndTheJobStillRuns() async throws {
        // The budget's own clock never moves in this test: a request that waited on it would never go.
        let budget = RateBudget(clock: TestClock(), wallClock: { GlueFixture.epoch })
        let fixture = try await GlueFixture(
            configuration: NotificationRaiserConfiguration(
                settings: NotificationSettings(quietHours: RaiserTimeTests.night)),
            budget: budget)
        await fixture.server.post(as: fixture.bob, "late @alice", mentioning: [fixture.alice])
        #expect(try await fixture.raiser.pollAndRaise().map(\.label) == ["hold:quietHours"])
        // Then the server said "retry in 10 minutes" to alice's account (every path of hers is one family).
        await budget.record(
            RateLimitSignal(statusCode: 429, retryAfter: "600"), host: "sandbox.invalid", account: GlueFixture.account,
            family: .mastodon(method: "GET", path: "/api/v1/markers"))
        let before = fixture.sent.withLock { $0.count }
        await fixture.clock.advance(by: .seconds(8 * 3600))
        // The job asks nothing (no marker, no poll) rather than wait, and decides over what is stored.
        #expect(try await fixture.raiser.releaseHeld().decisions.map(\.label) == ["raise"])
        #expect(fixture.sent.withLock { $0.count } == before)
    }
}
