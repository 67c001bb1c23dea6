import TidingsCore

/// One change the app-facing ``MastodonSync`` reports, merged from every account's engine and user stream.
public enum MastodonSyncChange: Sendable, Equatable {
    /// An account's engine changed something (the app re-reads what it names from the store).
    case engine(account: String, MastodonEngineChange)
    /// The user stream of an account changed state (opened, closed, gave up and why).
    case stream(account: String, MastodonStreamState)
    /// The server's capabilities of an account were fetched or changed; the tiers were chosen again.
    case capabilities(account: String, MastodonCapabilities)
    /// An account was signed out: its polling and stream stopped.
    case signedOut(account: String)
    /// The subscriber fell behind and missed this many changes: re-read what it shows.
    case missed(Int)
}
