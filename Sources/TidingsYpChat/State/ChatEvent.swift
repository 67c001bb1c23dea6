import Foundation

/// Everything that changes a ``ChatState``: the person's actions, REST results, socket events and
/// the timeout's ticks.
public enum ChatEvent: Sendable, Equatable {
    /// The person did something; every action resets the inactivity timeout while logged in.
    case action(ChatAction)
    /// A REST call or a local operation finished.
    case result(ChatResult)
    /// The socket reported something (incoming events never reset the timeout).
    case socket(YpChatSocketEvent)
    /// One second of the inactivity timeout passed.
    case tick
}

/// An action of the person, as the reducer sees it (the repository performs its side effects).
public enum ChatAction: Sendable, Equatable {
    /// The app starts (or comes back): profile, countries, admin status, session, socket.
    case restoreSession
    /// Log in with this profile (validated by the reducer with ``ChatProfile/validationError``).
    case login(ChatProfile)
    /// Log out.
    case logout
    /// Open the conversation with this user.
    case openConversation(String)
    /// Close the open conversation.
    case closeConversation
    /// Send a text or image message to a partner; pending until `messageSent` with its id.
    case send(ChatOutgoingMessage)
    /// Send a console command (`/…`) with this message id.
    case command(String, messageId: String)
    /// Search users.
    case search(YpChatSearchQuery)
    /// Load the inbox.
    case requestInbox
    /// Load the history.
    case requestHistory
    /// Block this user.
    case block(String)
    /// Unblock this user.
    case unblock(String)
    /// Load the feedback list.
    case loadFeedback
    /// Send a feedback.
    case sendFeedback(FeedbackRequest)
    /// Log in as feedback admin (the password is not part of the action: it never enters the state).
    case adminLogin
    /// Log out as feedback admin.
    case adminLogout
    /// Delete a feedback entry (admin only).
    case deleteFeedback(id: String)
    /// Load the partner links.
    case loadPartners
    /// Upload an image of this many bytes for this partner, then send it.
    case uploadImage(byteCount: Int, toUserName: String)
    /// Dismiss the error message.
    case dismissError
    /// Dismiss the feedback message.
    case dismissFeedbackMessage
}

/// A message on its way out.
public struct ChatOutgoingMessage: Sendable, Equatable, Hashable {
    /// The client-made id (a UUID) that `messageSent` echoes.
    public var messageId: String
    /// The recipient.
    public var toUserName: String
    /// The text (empty for an image).
    public var text: String
    /// The image's absolute URL, for an image message.
    public var imageURL: URL?

    /// A message to send.
    public init(messageId: String, toUserName: String, text: String, imageURL: URL? = nil) {
        self.messageId = messageId
        self.toUserName = toUserName
        self.text = text
        self.imageURL = imageURL
    }
}

/// The operations whose failure the state reports.
public enum ChatOperation: String, Sendable, Equatable, Hashable {
    /// `restoreSession`.
    case restoreSession
    /// `login`.
    case login
    /// `logout`.
    case logout
    /// An emit (message, search, block...).
    case emit
    /// `GET api/countries`.
    case countries
    /// `GET api/feedback`.
    case loadFeedback
    /// `POST api/feedback`.
    case sendFeedback
    /// `POST api/feedback/admin-login`.
    case adminLogin
    /// `POST api/feedback/admin-logout`.
    case adminLogout
    /// `DELETE api/feedback/{id}`.
    case deleteFeedback
    /// `GET api/partners`.
    case partners
    /// `POST api/upload-image`.
    case upload
    /// `GET api/session` or the socket connect.
    case connect

    /// Whether its messages belong on the feedback screen (``ChatState/feedbackMessage``).
    var isFeedback: Bool { [.loadFeedback, .sendFeedback, .adminLogin, .adminLogout, .deleteFeedback].contains(self) }
}

/// Why the state was reset to logged out.
public enum ChatLogoutReason: Sendable, Equatable, Hashable {
    /// The person logged out.
    case person
    /// 30 minutes without an action.
    case inactivity
    /// The server no longer had the login (its own inactivity rule, a restart) and said this in its
    /// `error`; the client ends its session too rather than showing a chat that cannot send.
    case server(String)
}

/// What a REST call or local operation produced.
public enum ChatResult: Sendable, Equatable {
    /// The profile store's saved profile (nil: none).
    case profileLoaded(ChatProfile?)
    /// `api/countries`.
    case countriesLoaded(CountriesResponse)
    /// `api/feedback/admin-status`, admin-login or admin-logout.
    case adminStatus(Bool)
    /// `api/session`; `restoreSession` goes on with the socket.
    case sessionLoaded(SessionDto)
    /// `restoreSession` is done (the socket connected, or failed with a reported error).
    case restoreFinished
    /// The socket is being connected.
    case connecting
    /// `api/feedback`.
    case feedbackLoaded([FeedbackDto])
    /// `POST api/feedback` succeeded.
    case feedbackSent
    /// `DELETE api/feedback/{id}` succeeded.
    case feedbackDeleted(id: String)
    /// `api/partners`.
    case partnersLoaded([PartnerLinkDto])
    /// The upload is stored at this absolute URL (the image message follows as ``ChatAction/send(_:)``).
    case imageUploaded(URL)
    /// An operation failed with this notice.
    case failed(ChatOperation, YpChatNotice)
    /// Logged out: the state resets (keeping the saved profile and countries).
    case loggedOut(ChatLogoutReason)
}
