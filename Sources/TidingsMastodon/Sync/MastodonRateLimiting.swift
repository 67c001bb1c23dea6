import TidingsCore

/// `MastodonRateLimiting` says how ``MastodonSync`` paces its accounts' requests. The protection is on by
/// default: one `RateBudget` for every account the sync object holds — a scope per account and endpoint
/// family fed by Mastodon's `X-RateLimit-*` and `Retry-After` headers, and one politeness bucket per host
/// shared by every account on it (Mastodon also counts per IP, so five accounts on one small instance behave
/// like one) — and a `PollBudgetGate` over it for each account's polling.
public struct MastodonRateLimiting: Sendable {
    enum Mode: Sendable {
        case own(RateBudget.Configuration)
        case given(RateBudget)
        case disabled
    }

    let mode: Mode

    /// The default: a budget of the sync object's own with Mastodon's limits (300 requests per 5 minutes per
    /// host and per account, and its families'), on the sync object's clock.
    public static let automatic = MastodonRateLimiting(mode: .own(.mastodon))

    /// A budget of the sync object's own with other limits (a smaller instance, or a test).
    public static func automatic(_ configuration: RateBudget.Configuration) -> MastodonRateLimiting {
        MastodonRateLimiting(mode: .own(configuration))
    }

    /// The app's own budget, shared with whatever else it paces (other sync objects, uploads): it must be the
    /// one process-wide budget for the politeness buckets to mean anything.
    public static func budget(_ budget: RateBudget) -> MastodonRateLimiting {
        MastodonRateLimiting(mode: .given(budget))
    }

    /// No pacing by the sync object: clients keep whatever budget they were made with (none for most) and
    /// polling consults no gate unless one is given. For tests that need every request to go at once.
    public static let disabled = MastodonRateLimiting(mode: .disabled)
}
