/// Everything a YpChat screen shows, as one value (the Android app's `ChatState`).
///
/// Guarantees:
/// - It changes only through ``ChatState/reduce(_:_:)``, a pure function of the state and one
///   ``ChatEvent``; equal inputs give equal states, so screens and tests can rely on it.
/// - It holds no secret: no admin password, no cookie, no express session id — a dump of it is
///   safe to log.
/// - ``timeoutRemaining`` counts down only while someone is logged in (see ``ChatEvent/tick``).
public struct ChatState: Sendable, Equatable {
    /// The inactivity timeout: 30 minutes.
    public static let inactivityTimeout = 1_800

    /// The profile the person last logged in with (kept across logouts).
    public var savedProfile: ChatProfile?
    /// The countries in the server's order (kept across logouts).
    public var countries: [CountriesResponse.Entry] = []
    /// The socket's connection.
    public var connection: ChatConnectionState = .disconnected
    /// The logged-in user; nil when logged out.
    public var currentUser: YpChatUser?
    /// The users online (`userList`).
    public var onlineUsers: [YpChatUser] = []
    /// The partner of the open conversation, if one is open.
    public var openConversation: String?
    /// The open conversation's messages, oldest first.
    public var conversationMessages: [ChatMessageItem] = []
    /// The last search's results.
    public var searchResults: [YpChatUser] = []
    /// The inbox: conversations with unread messages.
    public var inbox: [YpChatConversationSummary] = []
    /// The history: every conversation.
    public var history: [YpChatConversationSummary] = []
    /// How many conversations have unread messages (the inbox tab's badge).
    public var unreadChatsCount = 0
    /// The users this user blocked.
    public var blockedUsers: Set<String> = []
    /// The console's output, oldest first.
    public var consoleLines: [ChatConsoleLine] = []
    /// The last command's table, if one came.
    public var commandTable: YpChatCommandTable?
    /// Whether the console waits for an answer to a command (an `error` then goes to the console too).
    public var consoleAwaitsReply = false
    /// The feedback entries.
    public var feedback: [FeedbackDto] = []
    /// Whether this session is a feedback admin.
    public var isFeedbackAdmin = false
    /// The partner links.
    public var partners: [PartnerLinkDto] = []
    /// The image upload.
    public var upload: ChatUploadState = .idle
    /// Seconds until the inactivity logout (``inactivityTimeout`` after each action of the person).
    public var timeoutRemaining = ChatState.inactivityTimeout
    /// The error to show, if any.
    public var errorMessage: YpChatNotice?
    /// The feedback screen's message (sent, deleted, admin login failed...), if any.
    public var feedbackMessage: YpChatNotice?
    /// What is loading.
    public var loading = ChatLoadingFlags()

    /// A fresh state: logged out, nothing loaded.
    public init() {}

    /// Whether someone is logged in.
    public var isLoggedIn: Bool { currentUser != nil }

    /// The state after a logout: fresh, keeping the saved profile and the countries.
    public func loggedOut() -> ChatState {
        var state = ChatState()
        state.savedProfile = savedProfile
        state.countries = countries
        return state
    }
}
