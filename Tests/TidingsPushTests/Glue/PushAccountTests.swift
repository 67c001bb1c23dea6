import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsPush

/// Reconcile at launch, category switches, routing and the scheduler's knowledge of push, over the sandbox.
@Suite(.timeLimit(.minutes(1))) struct PushAccountTests {
    @Test func launchIsIdempotentAndOnlyChangedAlertsAreSent() async throws {
        let fixture = try await GlueFixture(configuration: NotificationRaiserConfiguration(mode: .content))
        let router = PushAccountRouter()
        let account = MastodonPushAccount(raiser: fixture.raiser, registrar: fixture.registrar, router: router)
        guard case .active(let first) = await account.launch(endpoint: GlueFixture.endpoint) else {
            Issue.record("not subscribed")
            return
        }
        #expect(first.alerts.enabled.contains("favourite"))
        #expect(router.account(for: GlueFixture.endpoint) == GlueFixture.account)
        // A second launch sends nothing but the GET that checks.
        await account.launch(endpoint: GlueFixture.endpoint)
        #expect(fixture.server.pushSubscriptions.requestLog == ["GET", "POST", "GET"])
        // Switching favourites off sends one PUT; the raiser drops favourites from now on.
        var settings = NotificationSettings()
        settings.enabledCategories.remove(.favourite)
        guard case .active(let changed) = await account.change(settings: settings) else {
            Issue.record("not changed")
            return
        }
        #expect(!changed.alerts.enabled.contains("favourite"))
        // Quiet hours change no alert: nothing is sent.
        settings.quietHours = QuietHours(start: (22, 0), end: (7, 0))
        await account.change(settings: settings)
        #expect(fixture.server.pushSubscriptions.requestLog.filter { $0 == "PUT" }.count == 1)
        // Switching off `moderation_warning`, which has no alert key, sends nothing either.
        settings.enabledCategories.remove(.moderationWarning)
        await account.change(settings: settings)
        #expect(fixture.server.pushSubscriptions.requestLog.filter { $0 == "PUT" }.count == 1)
        #expect(
            fixture.server.pushSubscriptions.subscription(token: "alice-token")?.alerts.contains("favourite") == false)
    }

    @Test func signOutStopsRoutingAndUnsubscribes() async throws {
        let fixture = try await GlueFixture(configuration: NotificationRaiserConfiguration(mode: .content))
        let router = PushAccountRouter()
        let account = MastodonPushAccount(raiser: fixture.raiser, registrar: fixture.registrar, router: router)
        await account.launch(endpoint: GlueFixture.endpoint)
        _ = try await account.signOut()
        #expect(router.account(for: GlueFixture.endpoint) == nil)
        #expect(fixture.server.pushSubscriptions.subscription(token: "alice-token") == nil)
        #expect(await account.status == .none)
    }

    @Test func signOutWithdrawsItsOwnRegistrationWhenTheRaiserWasNotGivenIt() async throws {
        let fixture = try await GlueFixture(configuration: NotificationRaiserConfiguration(mode: .content))
        // The app built the raiser without `registrations:`.
        let raiser = MastodonNotificationRaiser(
            engine: fixture.engine, policy: fixture.policy,
            clock: NotificationPolicyClock(fixture.clock, origin: GlueFixture.epoch),
            configuration: NotificationRaiserConfiguration(mode: .content))
        let account = MastodonPushAccount(raiser: raiser, registrar: fixture.registrar, router: PushAccountRouter())
        #expect(await account.launch(endpoint: GlueFixture.endpoint) != .none)
        let keys = try await fixture.registrar.keys()
        #expect(fixture.server.pushSubscriptions.subscription(token: "alice-token") != nil)
        let report = try await account.signOut()
        #expect(report.failures.isEmpty)
        #expect(fixture.server.pushSubscriptions.subscription(token: "alice-token") == nil, "the server stops pushing")
        #expect(try await fixture.registrar.keys().base64URLPublicKey != keys.base64URLPublicKey, "keys deleted")
        // Signing out again is harmless: the server's 404 for the gone subscription counts as removed.
        let deletes = { fixture.sent.withLock { $0 }.filter { $0 == "DELETE /api/v1/push/subscription" }.count }
        #expect(deletes() == 1)
        #expect(try await account.signOut().failures.isEmpty)
        #expect(deletes() == 2)
    }

    @Test func signOutSendsOneDeleteWhenTheRaiserHoldsTheRegistrationToo() async throws {
        let fixture = try await GlueFixture(configuration: NotificationRaiserConfiguration(mode: .content))
        let account = MastodonPushAccount(
            raiser: fixture.raiser, registrar: fixture.registrar, router: PushAccountRouter())
        await account.launch(endpoint: GlueFixture.endpoint)
        #expect(try await account.signOut().failures.isEmpty)
        #expect(fixture.sent.withLock { $0 }.filter { $0 == "DELETE /api/v1/push/subscription" }.count == 1)
    }

    @Test func aPushedAccountIsPolledAtMostEveryTenMinutesInTheBackground() async throws {
        let fixture = try await GlueFixture()
        let scheduler = MastodonPollScheduler(clock: fixture.clock)
        await scheduler.appStateChanged(.foreground(false))
        await scheduler.addAccount(MastodonPollAccount(key: GlueFixture.account, target: fixture.engine))
        let account = MastodonPushAccount(
            raiser: fixture.raiser, registrar: fixture.registrar, router: PushAccountRouter(), scheduler: scheduler)
        // Not pushed yet: two background refreshes both poll.
        #expect(await scheduler.backgroundRefresh().polled == [GlueFixture.account])
        #expect(await scheduler.backgroundRefresh().polled == [GlueFixture.account])
        await account.launch(endpoint: GlueFixture.endpoint)
        // Pushed and polled just now: skipped until 10 minutes have passed.
        #expect(await scheduler.backgroundRefresh().skipped == [GlueFixture.account])
        await fixture.clock.advance(by: .seconds(601))
        #expect(await scheduler.backgroundRefresh().polled == [GlueFixture.account])
        await scheduler.shutdown()
    }
}
