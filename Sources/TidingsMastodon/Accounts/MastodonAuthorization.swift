import TidingsCore

/// Whether an account's token is usable.
public enum MastodonAuthState: Sendable, Hashable {
    /// The token has not been refused.
    case signedIn
    /// The server refused the token (401): every request, poll and stream of the account stops until
    /// the app signs it in again with ``MastodonAuthorization/signIn(token:)``.
    case needsReauthentication
}

/// One change of a ``MastodonAuthorization``'s state, as its subscribers read them.
public enum MastodonAuthEvent: Sendable, Hashable {
    /// The state became this.
    case changed(MastodonAuthState)
    /// The subscriber fell behind and missed this many changes: re-read ``MastodonAuthorization/authState``.
    case missed(Int)
}

/// `MastodonAuthorization` holds one account's access token and its ``MastodonAuthState``, shared by
/// everything that talks to the server as that account.
///
/// Guarantees: the token is never in a description, a log or an error; once a 401 moved the state to
/// `needsReauthentication`, no token is handed out (so no request is sent) until ``signIn(token:)``;
/// each change of state reaches every subscriber of ``changes()`` in order.
public final class MastodonAuthorization: Sendable, CustomStringConvertible {
    private struct State {
        var token: String
        var authState: MastodonAuthState = .signedIn
    }

    private let state: LockedState<State>
    private let broadcaster = ChangeBroadcaster<MastodonAuthEvent> { .missed($0) }

    /// An account signed in with `token`.
    public init(token: String) { state = LockedState(State(token: token)) }

    /// The current state.
    public var authState: MastodonAuthState { state.withLock { $0.authState } }

    /// The token to send, or nil while the account needs reauthentication.
    var currentToken: String? {
        state.withLock { $0.authState == .signedIn ? $0.token : nil }
    }

    /// A fresh stream of state changes for one subscriber.
    public func changes() -> ChangeSubscription<MastodonAuthEvent> { broadcaster.subscribe() }

    /// Records that the server refused `token` (a 401). A token replaced meanwhile by ``signIn(token:)``
    /// is not affected: the refusal was of the old one.
    func refuse(token: String) {
        let changed = state.withLock { state -> Bool in
            guard state.token == token, state.authState == .signedIn else { return false }
            state.authState = .needsReauthentication
            return true
        }
        if changed { broadcaster.publish(.changed(.needsReauthentication)) }
    }

    /// Signs the account in again with a new token; requests resume.
    public func signIn(token: String) {
        let changed = state.withLock { state -> Bool in
            state.token = token
            defer { state.authState = .signedIn }
            return state.authState != .signedIn
        }
        if changed { broadcaster.publish(.changed(.signedIn)) }
    }

    /// The state only: never the token.
    public var description: String { "MastodonAuthorization(\(authState))" }
}
