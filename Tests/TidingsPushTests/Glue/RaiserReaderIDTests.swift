import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsPush
import TidingsSandbox

/// A reply to the reader is filed and worded as a reply with no reader ID configured by the app: the engine
/// learned it at sign-in (`verify_credentials`), so the `reply` switch is the one that applies (seed 002 §5).
@Suite(.timeLimit(.minutes(1))) struct RaiserReaderIDTests {
    /// Alice signed in through `MastodonSync`, a raiser over her engine with `configuration` (no `readerID`), and
    /// bob's reply to one of her statuses waiting on the server.
    static func replyAwaiting(_ configuration: NotificationRaiserConfiguration) async throws -> (
        MastodonNotificationRaiser, MastodonSync
    ) {
        let fixture = try await GlueFixture()
        let sync = MastodonSync(clock: fixture.clock, settings: MastodonPollSettings(preset: .manual), random: { 0.5 })
        let now: @Sendable () -> Date = { [clock = fixture.clock] in
            GlueFixture.epoch.addingTimeInterval(clock.now.offset.inSeconds)
        }
        let engine = await sync.addAccount(
            client: GlueFixture.client(fixture.http, token: "alice-token"),
            store: MastodonTimelineStore(database: fixture.database, now: now))
        let raiser = MastodonNotificationRaiser(
            engine: engine, policy: fixture.policy,
            clock: NotificationPolicyClock(fixture.clock, origin: GlueFixture.epoch), configuration: configuration)
        let mine = await fixture.server.post(as: fixture.alice, "my post")
        await fixture.server.post(as: fixture.bob, "@alice agreed", inReplyTo: mine, mentioning: [fixture.alice])
        return (raiser, sync)
    }

    @Test func aReplyToTheReaderIsRaisedAsAReply() async throws {
        let (raiser, sync) = try await Self.replyAwaiting(NotificationRaiserConfiguration())
        let decisions = try await raiser.pollAndRaise()
        #expect(decisions.map(\.label) == ["raise"])
        #expect(decisions.first?.decision.request?.title.text == "Bob replied to you")
        await sync.shutdown()
    }

    @Test func theReplySwitchTurnsRepliesOffAndLeavesMentionsOn() async throws {
        var configuration = NotificationRaiserConfiguration()
        configuration.settings.enabledCategories.remove(.reply)
        let (raiser, sync) = try await Self.replyAwaiting(configuration)
        #expect(try await raiser.pollAndRaise().map(\.label) == ["drop:categoryOff"])
        await sync.shutdown()
    }
}
