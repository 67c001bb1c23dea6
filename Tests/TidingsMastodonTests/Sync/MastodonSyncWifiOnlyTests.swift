import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox

/// "Wi-Fi only sync" on a metered path covers the user stream too (seed 002 §3: notifications only): no stream
/// opens, so no Home backfill runs, and the ticks poll notifications only; back on Wi-Fi the stream opens, and
/// it closes at once when the path becomes metered again.
@Suite(.timeLimit(.minutes(1)))
struct MastodonSyncWifiOnlyTests {
    private static let alice = "alice@sandbox"

    @Test func onCellularWithWifiOnlyNoStreamOpensAndNoHomeIsFetched() async throws {
        let base = try await EngineFixture()
        let sync = MastodonSync(
            clock: base.clock, settings: MastodonPollSettings(preset: .normal, wifiOnly: true),
            streamConnector: MastodonSandboxServer.inProcessStreamConnector(base.http), random: { 0.5 })
        await sync.appStateChanged(.networkPath(.cellular))
        await sync.appStateChanged(.activeAccount(Self.alice))
        await sync.appStateChanged(.visibleTimeline(MastodonTimelineKey.homeTimeline))
        _ = await base.postMany(3)
        await sync.addAccount(
            client: MastodonAPIClient(
                server: URL(string: "https://sandbox.invalid")!, accountKey: Self.alice,
                authorization: MastodonAuthorization(token: "alice-token"),
                transport: MastodonSandboxTransport(server: base.http)),
            store: base.store)
        // Ten minutes of foreground on cellular, Home on screen.
        for _ in 0..<20 {
            await base.clock.advance(by: .seconds(30))
            await sync.appStateChanged(.interaction)
        }
        #expect(base.requests("/api/v1/streaming") == 0, "no stream on a metered path")
        #expect(base.requests("/api/v1/timelines/home") == 0, "no Home backfill, no Home poll")
        #expect(base.requests("/api/v2/notifications") > 0, "notifications only")
        #expect(await sync.streamState(for: Self.alice) == .stopped)
        // Not the safety net of a stream that never opened: the table, notifications only.
        #expect(await sync.scheduler.plan(for: Self.alice)?.schedule == .every(.seconds(30)))

        // Wi-Fi: the stream opens and its backfill reads Home.
        await sync.appStateChanged(.networkPath(.wifi))
        #expect(await eventually { await sync.streamState(for: Self.alice) == .open })
        #expect(base.requests("/api/v1/timelines/home") > 0)

        // Metered again: closed at once.
        await sync.appStateChanged(.networkPath(.cellular))
        #expect(await sync.streamState(for: Self.alice) == .stopped)
        await sync.shutdown()
    }

    @Test func turningWifiOnlyOffOnCellularOpensTheStream() async throws {
        let base = try await EngineFixture()
        let sync = MastodonSync(
            clock: base.clock, settings: MastodonPollSettings(preset: .manual, wifiOnly: true),
            streamConnector: MastodonSandboxServer.inProcessStreamConnector(base.http), random: { 0.5 })
        await sync.appStateChanged(.networkPath(.cellular))
        await sync.appStateChanged(.activeAccount(Self.alice))
        await sync.addAccount(
            client: MastodonAPIClient(
                server: URL(string: "https://sandbox.invalid")!, accountKey: Self.alice,
                authorization: MastodonAuthorization(token: "alice-token"),
                transport: MastodonSandboxTransport(server: base.http)),
            store: base.store)
        #expect(await sync.streamState(for: Self.alice) == .stopped)
        await sync.appStateChanged(.settings(MastodonPollSettings(preset: .manual, wifiOnly: false)))
        #expect(await eventually { await sync.streamState(for: Self.alice) == .open })
        await sync.appStateChanged(.settings(MastodonPollSettings(preset: .manual, wifiOnly: true)))
        #expect(await sync.streamState(for: Self.alice) == .stopped)
        await sync.shutdown()
    }
}
