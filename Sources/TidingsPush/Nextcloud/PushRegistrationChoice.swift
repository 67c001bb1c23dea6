import TidingsMastodon

/// The one push registration an account gets (never two: a person must not be notified twice).
public enum PushRegistrationChoice: Sendable, Hashable {
    /// The account's Mastodon server's Web Push subscription.
    case mastodonWebPush
    /// Nextcloud's push proxy (APNs on Apple platforms).
    case nextcloudProxy
    /// Nextcloud's own Web Push, to a UnifiedPush distributor (Android).
    case nextcloudWebPush
    /// No push: the account is polled.
    case none

    /// The kind of account.
    public enum AccountKind: Sendable, Hashable {
        /// A Mastodon account.
        case mastodon
        /// A Nextcloud Social account (Mastodon-compatible API on a Nextcloud server).
        case nextcloudSocial
    }

    /// How the device receives pushes.
    public enum Platform: Sendable, Hashable {
        /// iOS/macOS: APNs, reachable for Nextcloud through the proxy.
        case apple
        /// Android with a UnifiedPush distributor.
        case unifiedPush
        /// No push channel at all (Android without a distributor, a desktop without a relay): every account is
        /// polled.
        case noPushService
    }

    /// Chooses, as a pure function: Mastodon accounts use Mastodon Web Push (to an APNs relay's or a
    /// UnifiedPush distributor's endpoint); Nextcloud Social accounts use the proxy (Apple) or Nextcloud Web Push
    /// (UnifiedPush) when the account's Nextcloud connection is connected and its capabilities offer it (`devices`,
    /// `webpush`); anything else — no push channel, a connection not (yet) connected, a server without those
    /// keys — is polled. A Nextcloud Social account never gets Mastodon Web Push as well: one registration only.
    public static func choose(
        account: AccountKind, platform: Platform, nextcloud: NextcloudConnectionState
    ) -> PushRegistrationChoice {
        choose(account: account, platform: platform, nextcloud: nextcloud, capabilities: nil)
    }

    /// Chooses as ``choose(account:platform:nextcloud:)`` does, reading the Mastodon server's capabilities too: a
    /// Mastodon account gets Mastodon Web Push only while its server offers it (a non-empty `vapid_key`,
    /// ``MastodonCapabilities/offersWebPush``) and is polled otherwise, so a key that appears or vanishes after a
    /// capability refresh changes the choice; nil capabilities (not read yet) keep Web Push. A Nextcloud Social
    /// account's choice never reads them: its push is Nextcloud's, whatever Social's empty `vapid_key` says.
    ///
    /// For example, on each `MastodonSyncChange.capabilities`:
    ///
    /// ```swift
    /// let choice = PushRegistrationChoice.choose(
    ///     account: .mastodon, platform: .apple, nextcloud: .disconnected, capabilities: capabilities)
    /// ```
    public static func choose(
        account: AccountKind, platform: Platform, nextcloud: NextcloudConnectionState,
        capabilities: MastodonCapabilities?
    ) -> PushRegistrationChoice {
        if platform == .noPushService { return .none }
        switch account {
        case .mastodon:
            return capabilities?.offersWebPush == false ? .none : .mastodonWebPush
        case .nextcloudSocial:
            guard case .connected(let capabilities) = nextcloud else { return .none }
            switch platform {
            case .apple: return capabilities.supportsProxy ? .nextcloudProxy : .none
            case .unifiedPush: return capabilities.supportsWebPush ? .nextcloudWebPush : .none
            case .noPushService: return .none
            }
        }
    }
}
