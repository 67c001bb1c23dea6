import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox

/// Upgrades happen by themselves (seed 002 §2, §6): capabilities are read at launch and again on a foreground when
/// an hour has passed since, so a streaming URL that appeared opens the stream and a VAPID key that appeared or
/// went is published; a foreground within the hour asks nothing.
@Suite(.timeLimit(.minutes(1)))
struct MastodonSyncCapabilitiesRefreshTests {
    private static let alice = "alice@sandbox"

    static func instanceRequests(_ base: EngineFixture) -> Int {
        base.requests("/api/v1/instance") + base.requests("/api/v2/instance")
    }

    @Test func aForegroundAnHourLaterReadsThemAgainAndOpensAStreamThatAppeared() async throws {
        let fixture = try await MastodonSyncTests.Fixture()
        let sync = fixture.sync
        let server = fixture.base.server
        let changes = sync.changes()
        await sync.appStateChanged(.activeAccount(Self.alice))
        // Signed in while the server is a v1 one without streaming or a VAPID key.
        await server.setVariant(.nextcloud)
        await fixture.add("alice-token", Self.alice)
        #expect(await sync.streamState(for: Self.alice) == .stopped)
        await server.setVariant(.mastodon)

        // Within the hour: a foreground asks nothing and the stream stays closed.
        let launched = Self.instanceRequests(fixture.base)
        await fixture.base.clock.advance(by: .seconds(3599))
        await sync.appStateChanged(.foreground(false))
        await sync.appStateChanged(.foreground(true))
        await sync.housekeepingSettled()
        #expect(Self.instanceRequests(fixture.base) == launched)
        #expect(await sync.streamState(for: Self.alice) == .stopped)

        // An hour after launch: read again; the streaming URL opens the stream, the VAPID key is published.
        await fixture.base.clock.advance(by: .seconds(1))
        await sync.appStateChanged(.foreground(false))
        await sync.appStateChanged(.foreground(true))
        await sync.housekeepingSettled()
        #expect(Self.instanceRequests(fixture.base) > launched)
        #expect(await fixture.streamIs(Self.alice, .open))
        var published: [MastodonCapabilities] = []
        for await change in changes {
            if case .capabilities(Self.alice, let capabilities) = change { published.append(capabilities) }
            if published.count == 2 { break }
        }
        #expect(published.map(\.offersWebPush) == [false, true])
        #expect(published.map(\.offersStreaming) == [false, true])

        // The next foreground within the hour asks nothing again.
        let refreshed = Self.instanceRequests(fixture.base)
        await sync.appStateChanged(.foreground(false))
        await sync.appStateChanged(.foreground(true))
        await sync.housekeepingSettled()
        #expect(Self.instanceRequests(fixture.base) == refreshed)
        await sync.shutdown()
    }
}
