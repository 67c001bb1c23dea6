/// A `PollBudgetGate` lets a ``PollLoop`` consult the process's shared ``RateBudget`` before each tick,
/// so polling never spends what the server has asked to keep.
///
/// Guarantees: a tick is held while the account's scope (or its host) is held by a `Retry-After`, a
/// `Remaining: 0` or a backoff, and while the server's `X-RateLimit-Remaining` is at or below
/// ``reserve`` until its `X-RateLimit-Reset` — the reserve is left for what the person does. The gate
/// only reads the budget; the requests themselves acquire their tokens from the same budget (the
/// per-host politeness bucket every account on that host shares), so the gate never double-counts.
public struct PollBudgetGate: Sendable {
    /// The budget the account's requests acquire from.
    public let budget: RateBudget
    /// The host, as the requests name it.
    public let host: String
    /// The account's budget scope (never a token).
    public let account: String?
    /// The families the poll's requests are metered in.
    public let families: [RateLimitFamily]
    /// Requests kept for the person: at or below this many remaining, polling pauses until the reset.
    public let reserve: Int

    /// A gate over one account's scopes on `host`.
    public init(
        budget: RateBudget, host: String, account: String?, families: [RateLimitFamily] = [.default],
        reserve: Int = 10
    ) {
        self.budget = budget
        self.host = host
        self.account = account
        self.families = families.isEmpty ? [.default] : families
        self.reserve = max(0, reserve)
    }

    /// How long polling must wait before its next tick (`.zero`: it may go now).
    public func pause() async -> Duration {
        var longest = Duration.zero
        for family in families {
            let status = await budget.status(host: host, account: account, family: family)
            longest = max(longest, status.blockedFor)
            if let remaining = status.serverRemaining, remaining <= reserve, let resetIn = status.serverResetIn {
                longest = max(longest, resetIn)
            }
        }
        return longest
    }
}
