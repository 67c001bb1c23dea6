import Foundation
import TidingsCore

/// How strongly a notification may interrupt (Apple's `interruptionLevel`; Android's channel importance).
public enum NotificationInterruptionLevel: String, Hashable, Codable, Sendable {
    /// Sound and banner: addressed to the person (mentions, direct messages, requests, warnings).
    case active
    /// Delivered quietly to the list: reactions (favourites, boosts, follows) and other news.
    case passive
}

/// An action button of a notification. Each goes through the engine's durable outbox when tapped.
public enum NotificationAction: String, Hashable, Codable, Sendable {
    /// Reply with text input.
    case reply
    /// Favourite the status.
    case favourite
    /// Boost the status.
    case boost
    /// Mute the conversation (`POST /api/v1/statuses/:id/mute`).
    case muteConversation
    /// Open the app at the notification.
    case open
}

/// The Android notification channel kinds; a channel is one kind for one account, in a group per account.
public enum NotificationChannelKind: String, Hashable, Codable, Sendable, CaseIterable {
    /// Mentions and replies.
    case mentions
    /// Follows and follow requests.
    case follows
    /// Favourites.
    case favourites
    /// Boosts.
    case boosts
    /// Ended polls.
    case polls
    /// New posts of subscribed accounts.
    case newPosts = "new_posts"
    /// Edits.
    case edits
    /// Moderation warnings and severed relationships.
    case moderation
    /// Digest summaries.
    case digest
}

/// An Android channel: a kind of one account, in the account's channel group.
public struct NotificationChannel: Hashable, Codable, Sendable {
    /// The channel's ID, `<account>.<kind>`.
    public var id: String
    /// The channel group's ID: the account.
    public var groupID: String
    /// The kind.
    public var kind: NotificationChannelKind

    /// The channel of `kind` for `account`.
    public init(account: String, kind: NotificationChannelKind) {
        id = "\(account).\(kind.rawValue)"
        groupID = account
        self.kind = kind
    }
}

/// The avatar a notification shows.
public enum NotificationImage: Hashable, Sendable {
    /// A file the app's image cache already has (attach it without a download).
    case cachedFile(path: String)
    /// Only the URL is known: the app may download it, or show none.
    case remote(URL)
}

/// A piece of text the engine wrote, with its localisation key and arguments, so an app may word it from its
/// own catalog; `text` is the engine's wording in the context's language.
public struct NotificationText: Hashable, Sendable {
    /// The localisation key (``NotificationStrings``).
    public var key: String
    /// The arguments the key's template takes, in order.
    public var arguments: [String]
    /// The text in the language it was produced for.
    public var text: String

    /// A text.
    public init(key: String, arguments: [String], text: String) {
        self.key = key
        self.arguments = arguments
        self.text = text
    }

    /// The same text in `language`.
    public func localized(_ language: NotificationLanguage) -> String {
        NotificationStrings.format(key, arguments, language)
    }
}

/// `NotificationRequest` is what the app displays: every field is decided by the engine.
public struct NotificationRequest: Hashable, Sendable {
    /// The platform request identifier: raising again with it replaces the notification shown.
    public var identifier: String
    /// The signed-in account it is for.
    public var account: String
    /// Its category; nil for a digest summary or a generic notification.
    public var category: NotificationCategory?
    /// The title (who did what).
    public var title: NotificationText
    /// The body: the status text as plain text, at most ``NotificationPlainText/maximumLength`` characters.
    public var body: NotificationText
    /// The account's handle when more than one account is signed in.
    public var subtitle: String?
    /// Groups notifications of one conversation: `<account>#conversation:<id>`, or `<account>#<channel kind>`.
    public var threadIdentifier: String
    /// How strongly it may interrupt.
    public var interruptionLevel: NotificationInterruptionLevel
    /// The buttons, in order; empty while the app lock is on.
    public var actions: [NotificationAction]
    /// The Android channel.
    public var channel: NotificationChannel
    /// The author's avatar.
    public var avatar: NotificationImage?
    /// For mentions: the long-lived conversation shortcut of the author (`<account>#author:<id>`).
    public var shortcutKey: String?
    /// The status the actions act on.
    public var statusID: ServerID?
    /// The notification IDs it tells of (the raised set records these).
    public var serverIDs: [ServerID]
}
