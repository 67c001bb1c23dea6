import Testing
import TidingsCore

@testable import TidingsMastodon

/// The unread count is how a tick knows to poll notifications, and it is a weak signal: Mastodon caps it at 100,
/// and it is a net number (a notification that arrives while one about a deleted status goes leaves it as it
/// was). Both were found by `SyncModelTests` (seed 6030034, masked until syncfix by the "notification groups ["
/// known finding).
@Suite(.timeLimit(.minutes(1))) struct MastodonPollNotificationSignalTests {
    /// Found by `SyncModelTests` (seed 6030034, masked until syncfix by the "notification groups [" known
    /// finding): Mastodon caps the unread count at 100, so past it a new notification does not move the count and
    /// was never polled. At the cap every tick polls notifications (one request when nothing is new).
    @Test func aCountAtTheServersCapPollsNotificationsAtEveryTick() async {
        let fixture = await PollingFixture(prepare: { await $0.setUnreadCount(99) })
        await fixture.advance(30)
        #expect(await fixture.target.names == ["unread", "timeline:home", "notifications", "unread", "timeline:home"])
        await fixture.target.setUnreadCount(100)
        await fixture.advance(30)
        await fixture.advance(30)
        #expect(
            await fixture.target.names.suffix(6) == [
                "unread", "timeline:home", "notifications", "unread", "timeline:home", "notifications",
            ], "the count stays at the cap: notifications at every tick")
        await fixture.scheduler.shutdown()
    }

    @Test func notificationsArePolledAtLeastEveryTenMinutesWhateverTheCount() async {
        let fixture = await PollingFixture()
        for _ in 0..<24 {
            await fixture.scheduler.appStateChanged(.interaction)
            await fixture.advance(30)
        }
        let polls = await fixture.target.calls.filter { $0.call == .notifications }.map(\.second)
        #expect(polls == [0, 600], "the first count, then ten minutes later although the count never moved")
        await fixture.scheduler.shutdown()
    }
}
