import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsPush

/// Sign-out: the app is told to withdraw what was raised and remove the channel group; the raised set and the
/// push keys are deleted; the server's subscription and every other registration are withdrawn.
@Suite(.timeLimit(.minutes(1))) struct RaiserSignOutTests {
    struct Distributor: PushRegistrationWithdrawing {
        let calls: LockedState<Int>
        let fails: Bool
        var registrationName: String { fails ? "failing" : "distributor" }
        func withdrawRegistration() async throws {
            calls.withLock { $0 += 1 }
            if fails { throw PushRoutingError.unknownEndpoint }
        }
    }

    @Test func signOutWithdrawsEverything() async throws {
        let fixture = try await GlueFixture(configuration: NotificationRaiserConfiguration(mode: .content))
        try await fixture.subscribe()
        #expect(fixture.server.pushSubscriptions.subscription(token: "alice-token") != nil)
        await fixture.server.post(as: fixture.bob, "hi @alice", mentioning: [fixture.alice])
        let raised = try await fixture.raiser.pollAndRaise()
        let identifier = try #require(raised.first?.decision.request?.identifier)
        let keysBefore = try await fixture.registrar.keys()
        let events = fixture.raiser.events()

        let report = try await fixture.raiser.signOut()
        #expect(report.withdrawal.withdrawRequestIdentifiers == [identifier])
        #expect(report.withdrawal.removeChannelGroup == GlueFixture.account)
        #expect(report.failures.isEmpty)
        var iterator = events.makeAsyncIterator()
        #expect(await iterator.next() == .withdraw(report.withdrawal))
        // The server no longer pushes to alice.
        #expect(fixture.server.pushSubscriptions.subscription(token: "alice-token") == nil)
        // The keys are gone: asking again makes new ones.
        #expect(try await fixture.registrar.keys().base64URLPublicKey != keysBefore.base64URLPublicKey)
        // The raised set is gone: nothing is left to withdraw, and the widget line is removed.
        #expect(try await fixture.policy.signOut(account: GlueFixture.account).withdrawRequestIdentifiers.isEmpty)
        #expect(fixture.board.snapshot(at: GlueFixture.epoch).accounts.isEmpty)
    }

    /// alice in content mode on Apple, and an undecryptable push of bob's mention handled: the generic notification.
    private func genericShown() async throws -> (GlueFixture, NotificationRequest) {
        var configuration = NotificationRaiserConfiguration(mode: .content)
        configuration.content = NotificationContentContext(platform: .apple, accountHandle: "alice@sandbox")
        let fixture = try await GlueFixture(configuration: configuration)
        try await fixture.subscribe()
        await fixture.server.post(as: fixture.bob, "hi @alice", mentioning: [fixture.alice])
        var push = try #require(await fixture.receivedPushes(1).first)
        push.body[push.body.count - 1] ^= 0x01  // the tag no longer authenticates
        guard case .unusable(_, let generic?) = try await fixture.raiser.handle(push) else {
            throw PushRoutingError.unknownEndpoint
        }
        return (fixture, generic)
    }

    @Test func theNextRaiseWithdrawsTheGenericNotificationOnce() async throws {
        let (fixture, generic) = try await genericShown()
        #expect(generic.identifier == "\(GlueFixture.account)#generic")
        let events = fixture.raiser.events()
        #expect(try await fixture.raiser.pollAndRaise().map(\.label) == ["raise"])
        await fixture.server.post(as: fixture.carol, "and hi again @alice", mentioning: [fixture.alice])
        #expect(try await fixture.raiser.pollAndRaise().map(\.label) == ["drop:alreadyRaised", "raise"])
        let withdrawn = await fixture.withdrawals(events)
        #expect(withdrawn == [[generic.identifier]], "the real notification replaces it; the second raise has none")
        // Withdrawn already: sign-out does not name it again.
        #expect(try await fixture.raiser.signOut().withdrawal.withdrawRequestIdentifiers.count == 2)
    }

    @Test func signOutWithdrawsAGenericNotificationStillShown() async throws {
        let (fixture, generic) = try await genericShown()
        let report = try await fixture.raiser.signOut()
        #expect(report.withdrawal.withdrawRequestIdentifiers == [generic.identifier])
        #expect(try await fixture.policy.signOut(account: GlueFixture.account).withdrawRequestIdentifiers.isEmpty)
    }

    @Test func aFailingRegistrationIsReportedAndTheOthersStillRun() async throws {
        let calls = LockedState(0)
        let fixture = try await GlueFixture()
        let raiser = MastodonNotificationRaiser(
            engine: fixture.engine, policy: fixture.policy,
            clock: NotificationPolicyClock(fixture.clock, origin: GlueFixture.epoch),
            registrations: [Distributor(calls: calls, fails: true), Distributor(calls: calls, fails: false)])
        let report = try await raiser.signOut()
        #expect(calls.withLock { $0 } == 2)
        #expect(report.failures.keys.sorted() == ["failing"])
    }
}
