import Foundation
import TidingsCore

/// The app's image cache, asked for an avatar's local file so a notification attaches it without a download.
public protocol NotificationImageCache: Sendable {
    /// The path of the cached file for `url`, or nil when it is not cached.
    func cachedFilePath(for url: URL) -> String?
}

/// How content is worded and laid out, beyond the candidate itself.
public struct NotificationContentContext: Sendable {
    /// The language of titles and bodies.
    public var language: NotificationLanguage
    /// Where it is displayed.
    public var platform: NotificationPlatform
    /// The account's handle (`alice@example.social`), shown as subtitle with several accounts.
    public var accountHandle: String
    /// How many accounts are signed in.
    public var signedInAccounts: Int
    /// Whether the app lock is on (then no actions).
    public var appLocked: Bool
    /// The app's image cache, if any.
    public var imageCache: (any NotificationImageCache)?

    /// A context; English on Apple with one account, no lock and no cache unless said otherwise.
    public init(
        language: NotificationLanguage = .english, platform: NotificationPlatform = .apple,
        accountHandle: String = "", signedInAccounts: Int = 1, appLocked: Bool = false,
        imageCache: (any NotificationImageCache)? = nil
    ) {
        self.language = language
        self.platform = platform
        self.accountHandle = accountHandle
        self.signedInAccounts = signedInAccounts
        self.appLocked = appLocked
        self.imageCache = imageCache
    }
}

/// `NotificationContentBuilder` words and lays out a notification: title and body in the context's language,
/// thread, interruption level, actions, channel, avatar and shortcut, by ``NotificationKindTable``.
public enum NotificationContentBuilder {
    /// The request for one candidate.
    public static func request(for candidate: NotificationCandidate, context: NotificationContentContext)
        -> NotificationRequest
    {
        let language = context.language
        let name = candidate.author?.shownName ?? ""
        let category = candidate.category
        let others = candidate.groupCount - 1
        let title: NotificationText
        if let pushed = candidate.pushedTitle, !pushed.isEmpty {
            title = NotificationText(key: "title.pushed", arguments: [pushed], text: pushed)
        } else if candidate.isPrivateMention {
            title = NotificationStrings.text("title.mention.private", [name], language)
        } else if others > 0, [.favourite, .reblog, .follow].contains(category) {
            title = NotificationStrings.text("title.\(category.rawValue).group", [name, String(others)], language)
        } else {
            title = NotificationStrings.text("title.\(category.rawValue)", [name], language)
        }
        let body: NotificationText
        if !candidate.spoilerText.isEmpty {
            // The content warning is shown instead of the text it hides.
            let warning = NotificationPlainText.truncated(candidate.spoilerText)
            body = NotificationStrings.text("body.content_warning", [warning], language)
        } else {
            let text = NotificationPlainText.truncated(NotificationPlainText.fromHTML(candidate.statusHTML))
            body = NotificationStrings.text("body.text", [text], language)
        }
        let kind = NotificationKindTable.channelKind(category)
        let thread =
            candidate.conversationID.map { "\(candidate.account)#conversation:\($0.rawValue)" }
            ?? "\(candidate.account)#\(kind.rawValue)"
        let avatar = candidate.author?.avatar.map { url in
            context.imageCache?.cachedFilePath(for: url).map { NotificationImage.cachedFile(path: $0) } ?? .remote(url)
        }
        let shortcut =
            category.isMention
            ? (candidate.author?.id?.rawValue ?? candidate.author?.handle).flatMap { key in
                key.isEmpty ? nil : "\(candidate.account)#author:\(key)"
            } : nil
        return NotificationRequest(
            identifier: candidate.requestIdentifier, account: candidate.account, category: category, title: title,
            body: body, subtitle: subtitle(context), threadIdentifier: thread,
            interruptionLevel: NotificationKindTable.interruptionLevel(category),
            actions: NotificationKindTable.actions(
                category, platform: context.platform, isPrivate: candidate.isPrivateMention,
                appLocked: context.appLocked),
            channel: NotificationChannel(account: candidate.account, kind: kind), avatar: avatar,
            shortcutKey: shortcut, statusID: candidate.statusID, serverIDs: [candidate.serverID])
    }

    /// The one summary of a digest for `account`: "N new notifications", from whom. Nil when there is nothing.
    public static func digest(
        account: String, candidates: [NotificationCandidate], context: NotificationContentContext
    ) -> NotificationRequest? {
        guard !candidates.isEmpty else { return nil }
        let language = context.language
        let count = candidates.reduce(0) { $0 + $1.groupCount }
        let title =
            count == 1
            ? NotificationStrings.text("title.digest.one", [], language)
            : NotificationStrings.text("title.digest.other", [String(count)], language)
        var names: [String] = []
        for name in candidates.compactMap({ $0.author?.shownName }) where !names.contains(name) && !name.isEmpty {
            names.append(name)
        }
        let shown = names.prefix(2).joined(separator: ", ")
        let body =
            names.count > 2
            ? NotificationStrings.text("body.digest.more", [shown, String(names.count - 2)], language)
            : NotificationStrings.text("body.digest", [shown], language)
        return NotificationRequest(
            identifier: "\(account)#digest", account: account, category: nil, title: title, body: body,
            subtitle: subtitle(context), threadIdentifier: "\(account)#digest", interruptionLevel: .passive,
            actions: context.appLocked ? [] : (context.platform == .apple ? [.open] : []),
            channel: NotificationChannel(account: account, kind: .digest), avatar: nil, shortcutKey: nil,
            statusID: nil, serverIDs: candidates.map(\.serverID))
    }

    /// The generic notification ("New activity" and the account's handle) for a push whose payload cannot be
    /// used where the platform must show something (an Apple notification service extension); nil elsewhere,
    /// where a push may show nothing. The next poll's notification replaces it.
    public static func generic(account: String, context: NotificationContentContext) -> NotificationRequest? {
        guard context.platform == .apple else { return nil }
        return NotificationRequest(
            identifier: "\(account)#generic", account: account, category: nil,
            title: NotificationStrings.text("title.generic", [], context.language),
            body: NotificationStrings.text("body.generic", [context.accountHandle], context.language),
            subtitle: nil, threadIdentifier: "\(account)#generic", interruptionLevel: .passive,
            actions: context.appLocked ? [] : [.open], channel: NotificationChannel(account: account, kind: .mentions),
            avatar: nil, shortcutKey: nil, statusID: nil, serverIDs: [])
    }

    /// The notification of another Nextcloud app (Talk, Files…) pushed for a Nextcloud account, where the
    /// platform requires one (an Apple notification service extension must show something); nil elsewhere, where
    /// the app may leave it to that app. Title "New notification in <app>" / "Neue Benachrichtigung in <app>";
    /// body the push's subject as the server worded it (in the person's language), truncated; passive, no
    /// action but Open; identifier `<account>#nextcloud:<nid>`, so the server's `delete` of `nid` withdraws it.
    /// The Mastodon categories, quiet hours and digest do not apply: they are Social's.
    public static func otherApp(
        account: String, nid: Int64, app: String, subject: String, context: NotificationContentContext
    ) -> NotificationRequest? {
        guard context.platform == .apple else { return nil }
        let name = nextcloudAppNames[app] ?? app
        return NotificationRequest(
            identifier: "\(account)#nextcloud:\(nid)", account: account, category: nil,
            title: NotificationStrings.text("title.nextcloud.other_app", [name], context.language),
            body: NotificationStrings.text("body.text", [NotificationPlainText.truncated(subject)], context.language),
            subtitle: subtitle(context), threadIdentifier: "\(account)#nextcloud:\(app)", interruptionLevel: .passive,
            actions: context.appLocked ? [] : [.open], channel: NotificationChannel(account: account, kind: .mentions),
            avatar: nil, shortcutKey: nil, statusID: nil, serverIDs: [])
    }

    /// The product names of Nextcloud apps whose ID differs from them; others are shown by their ID.
    static let nextcloudAppNames = ["spreed": "Talk", "files_sharing": "Files", "dav": "Calendar"]

    private static func subtitle(_ context: NotificationContentContext) -> String? {
        context.signedInAccounts > 1 && !context.accountHandle.isEmpty ? context.accountHandle : nil
    }
}
