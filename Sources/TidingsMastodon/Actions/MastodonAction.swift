import TidingsCore

/// An action the reader takes on a status or an account, applied optimistically and sent through the outbox.
public enum MastodonAction: String, Sendable, Hashable, CaseIterable {
    /// Favourite a status.
    case favourite
    /// Take a favourite back.
    case unfavourite
    /// Boost a status.
    case reblog
    /// Take a boost back.
    case unreblog
    /// Bookmark a status.
    case bookmark
    /// Remove a bookmark.
    case unbookmark
    /// Follow an account.
    case follow
    /// Stop following an account.
    case unfollow
    /// Mute a status's conversation (no more notifications from it; acting from a notification).
    case mute
    /// Unmute a status's conversation.
    case unmute

    /// Whether the target is an account (follow, unfollow) rather than a status.
    public var targetsAccount: Bool { self == .follow || self == .unfollow }

    /// The action that undoes this one.
    public var inverse: MastodonAction {
        switch self {
        case .favourite: .unfavourite
        case .unfavourite: .favourite
        case .reblog: .unreblog
        case .unreblog: .reblog
        case .bookmark: .unbookmark
        case .unbookmark: .bookmark
        case .follow: .unfollow
        case .unfollow: .follow
        case .mute: .unmute
        case .unmute: .mute
        }
    }

    var statusAction: MastodonAPIClient.StatusAction? { MastodonAPIClient.StatusAction(rawValue: rawValue) }
}

/// An action written to the durable outbox and not yet confirmed by the server.
public struct MastodonPendingAction: Sendable, Hashable {
    /// The outbox row: actions are sent in this order.
    public var id: Int64
    /// What to do.
    public var action: MastodonAction
    /// The status or account it applies to.
    public var target: ServerID

    /// A pending action.
    public init(id: Int64, action: MastodonAction, target: ServerID) {
        self.id = id
        self.action = action
        self.target = target
    }
}

/// Why the server refused an action for good, for the UI to show; the action's effect has been reverted.
public enum MastodonActionFailure: Sendable, Hashable {
    /// The status or account no longer exists (404/410); a status is removed from the cache too.
    case notFound
    /// The server refused the request (400/422, e.g. boosting a private post).
    case refused
    /// The account's token was refused: sign in again.
    case needsReauthentication
    /// The server kept failing (5xx, drops) through every attempt.
    case gaveUp(attempts: Int)
}
