/// What the user stream is doing, as the app can show it.
public enum MastodonStreamState: Sendable, Hashable {
    /// Not started, or closed because the app went to the background or was stopped.
    case stopped
    /// Connecting; `failures` connection attempts in a row failed before this one.
    case connecting(failures: Int)
    /// Open: events arrive as they happen.
    case open
    /// Waiting (jittered backoff) before the next attempt after `failures` failures in a row.
    case waiting(failures: Int)
    /// Gave up after too many failures in a row, or because the account needs to sign in again, until
    /// the app returns to the foreground, the network returns or the account changes (``MastodonUserStream/resume()``).
    case gaveUp(MastodonStreamGiveUpReason)
}

/// Why the user stream gave up.
public enum MastodonStreamGiveUpReason: Sendable, Hashable {
    /// This many attempts in a row failed (a connection that dropped within 30 s counts as one); `lastError`
    /// describes the last (never a token).
    case tooManyFailures(Int, lastError: String)
    /// The server advertises no streaming API.
    case notOffered
    /// The account's token was refused: nothing is sent until it signs in again.
    case needsReauthentication
    /// The server's streaming URL is not one the token may go to (``MastodonStreamingTrust``): not `wss`, or a
    /// host outside the API's domain. The text says why, naming hosts and schemes, never the token.
    case untrustedStreamingURL(String)
}
