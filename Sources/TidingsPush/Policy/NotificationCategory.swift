import TidingsMastodon

/// A `NotificationCategory` is one of the per-account switches of seed 002 §5: every notification the policy
/// can raise belongs to exactly one.
///
/// `reply` is a mention whose status answers one of the reader's own statuses; every other category is the
/// notification's Mastodon `type`.
public enum NotificationCategory: String, CaseIterable, Codable, Hashable, Sendable {
    /// Someone mentioned the reader.
    case mention
    /// Someone replied to one of the reader's statuses (a mention in reply to the reader).
    case reply
    /// Someone favourited the reader's status.
    case favourite
    /// Someone boosted the reader's status.
    case reblog
    /// Someone followed the reader.
    case follow
    /// Someone asked to follow the reader.
    case followRequest = "follow_request"
    /// A poll the reader voted in or made ended.
    case poll
    /// Someone the reader subscribed to posted.
    case status
    /// A status the reader interacted with was edited.
    case update
    /// A moderator warned the reader.
    case moderationWarning = "moderation_warning"
    /// Follow relationships were severed by a moderation action.
    case severedRelationships = "severed_relationships"

    /// The category of a notification of `type`; nil for kinds the policy never raises (quotes, admin
    /// notices, kinds this version does not know).
    ///
    /// - Parameters:
    ///   - type: the notification's type as the server named it.
    ///   - isReplyToReader: whether a mention's status answers one of the reader's statuses.
    public init?(type: MastodonNotificationType, isReplyToReader: Bool = false) {
        switch type {
        case .mention: self = isReplyToReader ? .reply : .mention
        case .status: self = .status
        case .reblog: self = .reblog
        case .follow: self = .follow
        case .followRequest: self = .followRequest
        case .favourite: self = .favourite
        case .poll: self = .poll
        case .update: self = .update
        case .moderationWarning: self = .moderationWarning
        case .severedRelationships: self = .severedRelationships
        default: return nil
        }
    }

    /// Whether the category is a mention of the reader (a mention or a reply).
    public var isMention: Bool { self == .mention || self == .reply }
}
