/// The main shell's tabs, in the Android app's order: Online | Suche | Posteingang | Verlauf |
/// Konsole | Mehr.
public enum YpChatTab: String, Sendable, CaseIterable, Hashable {
    /// Users online.
    case online
    /// Search.
    case search
    /// Inbox (badge: unread chats).
    case inbox
    /// History.
    case history
    /// Console.
    case console
    /// More: feedback, partners, FAQ, rules, safety, imprint.
    case more

    /// The title's key in the string catalogue.
    public var titleKey: YpChatStringKey {
        switch self {
        case .online: .tabOnline
        case .search: .tabSearch
        case .inbox: .tabInbox
        case .history: .tabHistory
        case .console: .tabConsole
        case .more: .tabMore
        }
    }

    /// The badge to show on this tab in `state`: the inbox's unread chats count when above zero.
    public func badge(in state: ChatState) -> Int? {
        self == .inbox && state.unreadChatsCount > 0 ? state.unreadChatsCount : nil
    }

    /// The "More" tab's pages, in order, as string keys of their titles.
    public static let morePages: [YpChatStringKey] = [
        .moreFeedback, .morePartners, .moreFAQ, .moreRules, .moreSafety, .moreImprint,
    ]
}
