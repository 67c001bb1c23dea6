/// How the app is, as far as choosing a tier goes.
public struct MastodonAppState: Sendable, Hashable {
    /// Whether the app is in the foreground.
    public var foreground: Bool
    /// Whether the network path is satisfied.
    public var online: Bool
    /// Whether this account is the one on screen (only the active account streams).
    public var isActiveAccount: Bool
    /// Whether only notifications may be fetched: "Wi-Fi only sync" on a metered path (seed 002 §3). No stream
    /// opens then, as it would feed Home.
    public var notificationsOnly: Bool

    /// A state.
    public init(foreground: Bool, online: Bool, isActiveAccount: Bool, notificationsOnly: Bool = false) {
        self.foreground = foreground
        self.online = online
        self.isActiveAccount = isActiveAccount
        self.notificationsOnly = notificationsOnly
    }
}

/// Whether a push registration for the account is live (Mastodon Web Push, or Nextcloud's own push).
public enum MastodonPushRegistration: Sendable, Hashable {
    /// None, or it failed or expired.
    case none
    /// Pushes arrive.
    case active
}

/// How an account learns about new things. The tiers compose: push can be on with streaming, and
/// polling always stays as the baseline or as a slower safety net.
public struct MastodonTiers: Sendable, Hashable {
    /// How polling runs.
    public enum Polling: Sendable, Hashable {
        /// No polling: offline or needing reauthentication.
        case stopped
        /// The adaptive foreground table (push and streaming absent).
        case adaptive
        /// A safety net beside a live stream: every 5 minutes, 10 when the account is also pushed.
        case safetyNet(minutes: Int)
        /// Background: only the system's background refresh polls (notifications, never timelines).
        case backgroundRefresh
    }

    /// Whether pushes wake the app for this account.
    public var push: Bool
    /// Whether the user stream is open.
    public var streaming: Bool
    /// How polling runs.
    public var polling: Polling

    /// Tiers.
    public init(push: Bool, streaming: Bool, polling: Polling) {
        self.push = push
        self.streaming = streaming
        self.polling = polling
    }
}

/// `MastodonTierPolicy` chooses an account's tiers; a pure function, re-run whenever an input changes
/// (capabilities refreshed, app state, push registration, auth state).
///
/// The rules (seed 002 §2, §3, §6):
/// - An account that needs reauthentication gets nothing: no push counted, no stream, no polling.
/// - Push is on when a registration is active (it works in the background and offline it simply
///   does not arrive, so it does not depend on the app state).
/// - Streaming needs an advertised streaming URL, the foreground, the network, and the active account, and
///   not "Wi-Fi only sync" on a metered path (notifications only there: the stream and its Home backfill would
///   spend the data the person asked to keep).
/// - Polling stops offline (it resumes on the path update, not on a timer); in the background only the
///   background refresh polls; beside an open stream polling slows to a safety net (5 min, 10 min when
///   pushed); otherwise the adaptive table runs, pushed or not (push may be lossy).
public enum MastodonTierPolicy {
    /// The tiers for these inputs.
    public static func tiers(
        capabilities: MastodonCapabilities, app: MastodonAppState, push: MastodonPushRegistration,
        auth: MastodonAuthState
    ) -> MastodonTiers {
        guard auth == .signedIn else { return MastodonTiers(push: false, streaming: false, polling: .stopped) }
        let pushed = push == .active
        let streaming =
            capabilities.offersStreaming && app.foreground && app.online && app.isActiveAccount
            && !app.notificationsOnly
        let polling: MastodonTiers.Polling
        if !app.online {
            polling = .stopped
        } else if !app.foreground {
            polling = .backgroundRefresh
        } else if streaming {
            polling = .safetyNet(minutes: pushed ? 10 : 5)
        } else {
            polling = .adaptive
        }
        return MastodonTiers(push: pushed, streaming: streaming, polling: polling)
    }
}
