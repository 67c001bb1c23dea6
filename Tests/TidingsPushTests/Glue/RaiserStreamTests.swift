import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsPush
import TidingsSandbox

/// The stream path: the user stream's `notification` event reaches the raiser at once (origin `stream`); the
/// poll that stores the same notification does not raise it again.
@Suite(.timeLimit(.minutes(1))) struct RaiserStreamTests {
    @Test func aStreamedMentionIsRaisedOnceAndThePollDropsIt() async throws {
        let fixture = try await GlueFixture()
        let raiser = fixture.raiser
        let stream = MastodonUserStream(
            engine: fixture.engine, connector: MastodonSandboxServer.inProcessStreamConnector(fixture.http),
            clock: fixture.clock, onNotification: { notification in _ = try? await raiser.streamed(notification) })
        var events = raiser.events().makeAsyncIterator()
        var states = stream.stateChanges().makeAsyncIterator()
        await stream.start()
        while let state = await states.next(), state != .open {}
        await fixture.server.waitForOpenStream()
        await fixture.server.post(as: fixture.bob, "streamed @alice", mentioning: [fixture.alice])
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
        let polled = try await fixture.raiser.pollAndRaise()
        #expect(polled.map(\.label) == ["drop:alreadyRaised"])
        await stream.stop()
    }
}
