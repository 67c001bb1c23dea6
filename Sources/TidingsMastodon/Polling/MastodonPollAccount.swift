import TidingsCore

/// One account as the polling scheduler knows it.
public struct MastodonPollAccount: Sendable {
    /// A stable, non-secret name (`alice@mastodon.social`): the scheduler's key.
    public var key: String
    /// What a tick calls: the account's sync engine.
    public var target: any MastodonPollTarget
    /// The server's capabilities, once known (`nil`: not yet; no streaming assumed).
    public var capabilities: MastodonCapabilities?
    /// Whether a push registration is live.
    public var push: MastodonPushRegistration
    /// The account's token holder: a refusal stops its polling, signing in again resumes it.
    public var authorization: MastodonAuthorization?
    /// The shared rate budget to consult before each tick (its reserve, its holds).
    public var gate: PollBudgetGate?

    /// An account.
    public init(
        key: String, target: any MastodonPollTarget, capabilities: MastodonCapabilities? = nil,
        push: MastodonPushRegistration = .none, authorization: MastodonAuthorization? = nil,
        gate: PollBudgetGate? = nil
    ) {
        self.key = key
        self.target = target
        self.capabilities = capabilities
        self.push = push
        self.authorization = authorization
        self.gate = gate
    }
}

/// What one background refresh did (``MastodonPollScheduler/backgroundRefresh(budget:)``).
public struct MastodonBackgroundRefreshReport: Sendable, Hashable {
    /// Accounts whose notifications (and unread count) were polled to the end.
    public var polled: [String] = []
    /// Accounts left out: pushed and polled within 10 minutes, waiting for `Retry-After` or their rate
    /// budget's reset, needing
    /// reauthentication, or everything while offline.
    public var skipped: [String] = []
    /// Accounts whose poll failed.
    public var failed: [String] = []
    /// Accounts whose poll the budget's end cancelled (what they stored before stays stored).
    public var cutShort: [String] = []
    /// When the app should schedule the next background refresh from now (never under 15 minutes).
    public var nextRefreshIn: Duration = .seconds(900)
}
