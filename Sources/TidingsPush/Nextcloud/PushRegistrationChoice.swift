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
    }

    /// Chooses, as a pure function: Mastodon accounts use Mastodon Web Push; Nextcloud Social accounts
    /// use the proxy (Apple) or Nextcloud Web Push (UnifiedPush) when the account's Nextcloud connection
    /// is connected and its capabilities offer it; anything else is polled.
    public static func choose(
        account: AccountKind, platform: Platform, nextcloud: NextcloudConnectionState
    ) -> PushRegistrationChoice {
        switch account {
        case .mastodon:
            return .mastodonWebPush
        case .nextcloudSocial:
            guard case .connected(let capabilities) = nextcloud else { return .none }
            switch platform {
            case .apple: return capabilities.supportsProxy ? .nextcloudProxy : .none
            case .unifiedPush: return capabilities.supportsWebPush ? .nextcloudWebPush : .none
            }
        }
    }
}
