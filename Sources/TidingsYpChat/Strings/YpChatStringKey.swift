/// The keys of the string catalogue: every message ``ChatState`` can show, and the texts of the
/// Android app's `strings.xml` the plan lists (app name, tabs, FAQ, rules, safety, imprint, the
/// photo-permission text).
public enum YpChatStringKey: String, Sendable, CaseIterable, Hashable {
    /// The app's name.
    case appName
    /// Tab titles.
    case tabOnline, tabSearch, tabInbox, tabHistory, tabConsole, tabMore
    /// The "More" pages' titles.
    case moreFeedback, morePartners, moreFAQ, moreRules, moreSafety, moreImprint
    /// The "More" pages' texts.
    case faqText, rulesText, safetyText, imprintText
    /// `NSPhotoLibraryUsageDescription`: why the app reads photos.
    case photoPermission
    /// Login screen labels.
    case loginTitle, loginNickname, loginGender, loginAge, loginCountry, loginButton, logoutButton
    /// Gender option labels.
    case genderMale, genderFemale, genderDiverse
    /// Connection states.
    case connectionConnected, connectionConnecting, connectionDisconnected
    /// The timeout countdown (`{0}` minutes, `{1}` seconds).
    case timeoutCountdown
    /// Shown after the inactivity logout.
    case timeoutLoggedOut
    /// Shown after the server ended the login (`{0}` the server's own words).
    case sessionEndedByServer
    /// Validation errors of the login.
    case errorNicknameTooShort, errorGenderMissing, errorAgeOutOfRange, errorCountryMissing
    /// Transport and server errors.
    case errorNetwork, errorTimedOut, errorUnauthorized, errorServer, errorUnexpectedAnswer, errorConnection
    /// An image over the limit (`{0}` megabytes).
    case errorImageTooLarge
    /// An action that needs a login.
    case errorNotLoggedIn
    /// A message the server did not confirm.
    case messageFailed
    /// Feedback screen messages.
    case feedbackSent, feedbackDeleted, adminLoggedIn, adminLoggedOut
    /// The upload banner.
    case uploadInProgress
    /// Chat screen labels.
    case chatBlock, chatUnblock, chatSend, chatPickImage, chatBack
    /// Empty lists.
    case emptyOnline, emptySearch, emptyInbox, emptyHistory
    /// Status lines (`{0}`: a user name, or the count of unread chats).
    case loggedInAs, loggedOut, chatWith, unreadChats, userBlocked, userUnblocked
}
