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
}
