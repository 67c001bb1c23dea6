import Foundation
import TidingsMastodon

extension MastodonNotificationRaiser {
    /// Has `sync` hand this account's user-stream `notification` events to ``streamed(_:)`` at once, so a
    /// streamed notification is decided when it arrives rather than at the stream's coalesced poll. Every path
    /// records in the one raised set, so the poll that stores it (and a push of it) finds it raised: it is
    /// raised at most once per server ID. Call it after the account was added to `sync` (a sign-out or a new
    /// `addAccount` forgets it).
    public nonisolated func followStreamedNotifications(of sync: MastodonSync) async {
        await sync.setStreamNotificationHandler(account: account) { [weak self] notification in
            _ = try? await self?.streamed(notification)
        }
    }

    /// Has `sync`'s ``MastodonSync/backgroundRefresh(budget:)`` raise this account's notifications inside its
    /// budget: once the refresh stored the new notifications, the server's notifications marker is learned (best
    /// effort, never waiting on the rate budget: what another device read is not raised) and what is new is raised
    /// (``raiseFromStore()``); once it read the unread count, the widget line is written again (the badge and the
    /// widget snapshot, through the board). No task of its own is involved, so a system that suspends the app right
    /// after the refresh returns loses nothing; the raised set is shared with every other path, so a run the budget
    /// cut, the next run, the stream and a push raise each notification at most once. Call it after the account
    /// was added to `sync` (a sign-out or a new `addAccount` forgets it).
    public nonisolated func raiseInBackgroundRefreshes(of sync: MastodonSync) async {
        await sync.setBackgroundRaiser(account: account) { [weak self] step in
            guard let self else { return }
            await self.backgroundStep(step)
        }
    }

    /// One step of a background refresh (a cancellation is the budget's end; what was decided stays recorded).
    func backgroundStep(_ step: MastodonBackgroundRaiseStep) async {
        switch step {
        case .notificationsPolled:
            try? await learnServerMarker()
            _ = try? await raiseFromStore()
        case .unreadCountRead:
            await updateWidget()
        }
    }
}
