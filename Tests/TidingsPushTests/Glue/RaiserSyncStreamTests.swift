import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsPush
import TidingsSandbox

/// `MastodonSync` hands the user stream's `notification` events to the account's raiser: a streamed mention is
/// decided at once (origin `stream`), and the poll and a push of the same notification find it raised.
@Suite(.timeLimit(.minutes(1))) struct RaiserSyncStreamTests {
    @Test func aStreamedMentionUnderMastodonSyncIsRaisedAtOnceAndOnlyOnce() async throws {
        let fixture = try await GlueFixture(configuration: NotificationRaiserConfiguration(mode: .content))
        try await fixture.subscribe()
        let sync = MastodonSync(
            clock: fixture.clock, settings: MastodonPollSettings(preset: .manual),
            streamConnector: MastodonSandboxServer.inProcessStreamConnector(fixture.http), random: { 0.5 })
        let changes = sync.changes()
        await sync.appStateChanged(.activeAccount(GlueFixture.account))
        let now: @Sendable () -> Date = { [clock = fixture.clock] in
            GlueFixture.epoch.addingTimeInterval(clock.now.offset.inSeconds)
        }
        let engine = await sync.addAccount(
            client: GlueFixture.client(fixture.http, token: "alice-token"),
            store: MastodonTimelineStore(database: fixture.database, now: now))
        let raiser = MastodonNotificationRaiser(
            engine: engine, policy: fixture.policy,
            clock: NotificationPolicyClock(fixture.clock, origin: GlueFixture.epoch),
            configuration: NotificationRaiserConfiguration(mode: .content),
            pushKeys: { [registrar = fixture.registrar] in try await registrar.keys() })
        await raiser.followStreamedNotifications(of: sync)
        var events = raiser.events().makeAsyncIterator()
        for await change in changes {
            if case .stream(GlueFixture.account, .open) = change { break }
        }
        await fixture.server.waitForOpenStream()
        await fixture.server.post(as: fixture.bob, "streamed @alice", mentioning: [fixture.alice])
        // No poll was asked for (manual preset, no raiser following polls): only the stream can decide this.
        var streamed: AccountNotificationDecision?
        while let event = await events.next() {
            if case .decided(let decision) = event {
                streamed = decision
                break
            }
        }
        #expect(streamed?.origin == .stream)
        #expect(streamed?.label == "raise")
        #expect(streamed?.decision.request?.body.text == "streamed @alice")
        // The poll and the push of the same notification find it raised.
        #expect(try await raiser.pollAndRaise().map(\.label) == ["drop:alreadyRaised"])
        let push = try #require(await fixture.receivedPushes(1).first)
        guard case .decided(let pushed) = try await raiser.handle(push) else {
            Issue.record("push not decided")
            return
        }
        #expect(pushed.label == "drop:alreadyRaised")
        await sync.shutdown()
    }
}
