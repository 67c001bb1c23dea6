/// `NotificationKindTable` is the per-kind table of docs/backends/push.md "Notification policy": interruption
/// level, actions per platform and Android channel for every category.
public enum NotificationKindTable {
    /// How strongly a notification of `category` may interrupt; a private mention is a mention.
    public static func interruptionLevel(_ category: NotificationCategory) -> NotificationInterruptionLevel {
        switch category {
        case .mention, .reply, .followRequest, .moderationWarning: .active
        case .favourite, .reblog, .follow, .poll, .status, .update, .severedRelationships: .passive
        }
    }

    /// The Android channel kind of `category`.
    public static func channelKind(_ category: NotificationCategory) -> NotificationChannelKind {
        switch category {
        case .mention, .reply: .mentions
        case .follow, .followRequest: .follows
        case .favourite: .favourites
        case .reblog: .boosts
        case .poll: .polls
        case .status: .newPosts
        case .update: .edits
        case .moderationWarning, .severedRelationships: .moderation
        }
    }

    /// The buttons of a notification of `category` on `platform`; none while the app lock is on. A private
    /// mention cannot be boosted, so it has no Boost. Android shows at most three.
    public static func actions(
        _ category: NotificationCategory, platform: NotificationPlatform, isPrivate: Bool = false,
        appLocked: Bool = false
    ) -> [NotificationAction] {
        guard !appLocked else { return [] }
        var actions: [NotificationAction]
        switch (category, platform) {
        case (.mention, .android), (.reply, .android): actions = [.reply, .favourite, .muteConversation]
        case (.mention, .apple), (.reply, .apple): actions = [.reply, .favourite, .boost, .open]
        case (.status, _): actions = [.reply, .favourite, .boost] + (platform == .apple ? [.open] : [])
        default: actions = platform == .apple ? [.open] : []
        }
        if isPrivate { actions.removeAll { $0 == .boost } }
        return platform == .android ? Array(actions.prefix(3)) : actions
    }
}
