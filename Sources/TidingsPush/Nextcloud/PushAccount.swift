import TidingsMastodon

/// A signed-in account as push registration sees it: its key, its kind and, for a Nextcloud Social account, its
/// Nextcloud connection (credentials and disconnected / connecting / connected / failed with a reason), which is
/// part of the account and decides its one push registration.
///
/// Safe to share between tasks: the connection's state is always the latest, so ``registration(on:)`` answers for
/// now; call it again after ``NextcloudConnection/connect()`` or a sign-out.
public struct PushAccount: Sendable {
    /// The app's account key (e.g. `alice@example.social`), the push stores' account column.
    public let key: String
    /// Mastodon, or Nextcloud Social.
    public let kind: PushRegistrationChoice.AccountKind
    /// The Nextcloud connection; nil for a Mastodon account.
    public let nextcloud: NextcloudConnection?

    /// A Mastodon account.
    public static func mastodon(key: String) -> PushAccount { PushAccount(key: key, kind: .mastodon, nextcloud: nil) }

    /// A Nextcloud Social account with its connection.
    public static func nextcloudSocial(key: String, connection: NextcloudConnection) -> PushAccount {
        PushAccount(key: key, kind: .nextcloudSocial, nextcloud: connection)
    }

    /// The connection's state (`.disconnected` for a Mastodon account, which has none).
    public var nextcloudState: NextcloudConnectionState { nextcloud?.state ?? .disconnected }

    /// The one registration this account gets on `platform` now (``PushRegistrationChoice/choose(account:platform:nextcloud:)``).
    public func registration(on platform: PushRegistrationChoice.Platform) -> PushRegistrationChoice {
        PushRegistrationChoice.choose(account: kind, platform: platform, nextcloud: nextcloudState)
    }

    /// The one registration this account gets on `platform` now with its server's `capabilities`, as last read
    /// (``PushRegistrationChoice/choose(account:platform:nextcloud:capabilities:)``: a Mastodon server whose
    /// `vapid_key` went away is polled).
    public func registration(
        on platform: PushRegistrationChoice.Platform, capabilities: MastodonCapabilities?
    ) -> PushRegistrationChoice {
        PushRegistrationChoice.choose(
            account: kind, platform: platform, nextcloud: nextcloudState, capabilities: capabilities)
    }
}
