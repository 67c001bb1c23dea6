import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsPush
import TidingsSandbox

/// `MastodonSync.backgroundRefresh(budget:)` raises inside its budget (seed 002 §4): one call polls, raises what is
/// new through the policy and updates the badge and the widget snapshot, with no task of the raiser's own that the
/// system could suspend first; a run the budget cuts raises nothing twice on the next.
@Suite(.timeLimit(.minutes(1))) struct RaiserBackgroundRefreshTests {
    /// A sync object in the background with alice signed in over the fixture's sandbox, and her raiser (writing
    /// to its own board) set to raise inside background refreshes; no `startFollowingPolls`.
    struct Setup {
        let fixture: GlueFixture
        let sync: MastodonSync
        let raiser: MastodonNotificationRaiser
        let board = NotificationWidgetBoard()

        init(variant: MastodonSandboxVariant = .mastodon) async throws {
            fixture = try await GlueFixture(variant: variant)
            sync = MastodonSync(clock: fixture.clock, random: { 0.5 })
            await sync.appStateChanged(.foreground(false))
            let now: @Sendable () -> Date = { [clock = fixture.clock] in
                GlueFixture.epoch.addingTimeInterval(clock.now.offset.inSeconds)
            }
            let engine = await sync.addAccount(
                client: GlueFixture.client(fixture.http, token: "alice-token"),
                store: MastodonTimelineStore(database: fixture.database, now: now))
            raiser = MastodonNotificationRaiser(
                engine: engine, policy: fixture.policy,
                clock: NotificationPolicyClock(fixture.clock, origin: GlueFixture.epoch), board: board)
            await raiser.raiseInBackgroundRefreshes(of: sync)
        }

        /// The bodies of the notifications raised so far on `events`, read up to a fence published now.
        func raised(_ events: MastodonNotificationRaiser.AsyncStreamOfEvents) async -> [String] {
            await raiser.withdrawRaised(["fence"])
            var bodies: [String] = []
            for await event in events {
                if case .withdrawRaised(["fence"]) = event { break }
                if case .decided(let decision) = event, decision.label == "raise" {
                    bodies.append(decision.decision.request?.body.text ?? "")
                }
            }
            return bodies
        }
    }

    @Test(arguments: [MastodonSandboxVariant.mastodon, .pleroma, .nextcloud])
    func oneRefreshRaisesANewMentionAndUpdatesTheBadgeAndTheSnapshot(variant: MastodonSandboxVariant) async throws {
        let setup = try await Setup(variant: variant)
        let events = setup.raiser.events()
        let fixture = setup.fixture
        await fixture.server.post(as: fixture.bob, "hi @alice", mentioning: [fixture.alice])
        let report = await setup.sync.backgroundRefresh(budget: .seconds(25))
        #expect(report.polled == [GlueFixture.account])
        // Raised by the call itself: nothing else follows the engine's polls here.
        #expect(await setup.raised(events) == ["hi @alice"])
        let line = try #require(setup.board.snapshot(at: GlueFixture.epoch).accounts.first)
        #expect(line.unreadCount == 1)
        #expect(line.recentMentions.map(\.text) == ["hi @alice"])
        #expect(setup.board.badge == 1)
        await setup.sync.shutdown()
    }

    @Test func aRunTheBudgetCutsRaisesNothingTwiceOnTheNext() async throws {
        let setup = try await Setup()
        let events = setup.raiser.events()
        let fixture = setup.fixture
        await fixture.server.post(as: fixture.bob, "first @alice", mentioning: [fixture.alice])
        // The unread count answers after the budget: the run is cut after the notifications were stored.
        fixture.http.faults.add(
            .delay(.seconds(60)), on: .path("/api/v2/notifications/unread_count", method: "GET"), times: 1)
        let run = Task { await setup.sync.backgroundRefresh(budget: .seconds(25)) }
        #expect(await fixture.clock.waitForSleepers(2))  // the budget and the delayed count
        await fixture.clock.advance(by: .seconds(25))
        let cut = await run.value
        #expect(cut.cutShort == [GlueFixture.account])
        #expect(await setup.raised(events) == ["first @alice"], "raised before the cut")

        await fixture.server.post(as: fixture.bob, "second @alice", mentioning: [fixture.alice])
        let next = await setup.sync.backgroundRefresh(budget: .seconds(25))
        #expect(next.polled == [GlueFixture.account])
        #expect(await setup.raised(events) == ["second @alice"], "the first is not raised again")
        #expect(setup.board.snapshot(at: GlueFixture.epoch).accounts.first?.unreadCount == 2)
        #expect(setup.board.badge == 2)
        await setup.sync.shutdown()
    }
}
