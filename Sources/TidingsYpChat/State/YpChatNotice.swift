/// A message a screen shows: one of the string catalogue's (shown in the person's language) or the
/// server's own text (shown as it came).
public enum YpChatNotice: Sendable, Equatable, Hashable {
    /// A catalogue message; `arguments` fill its `{0}`, `{1}`... placeholders.
    case localized(YpChatStringKey, arguments: [String] = [])
    /// The server's text (an `error` event, or an error body's `error`/`message`).
    case server(String)

    /// A catalogue message without arguments.
    public static func key(_ key: YpChatStringKey) -> YpChatNotice { .localized(key, arguments: []) }

    /// The text in `language`.
    public func text(in language: YpChatLanguage) -> String {
        switch self {
        case .localized(let key, let arguments): YpChatStrings.text(key, language: language, arguments: arguments)
        case .server(let text): text
        }
    }

    /// The notice for a failed operation: the server's message when it sent one, else the
    /// catalogue's message for the kind of failure. Never a password, cookie or body dump.
    public init(error: any Error) {
        guard let error = error as? YpChatError else {
            self = .key(.errorNetwork)
            return
        }
        if let message = error.message, !message.isEmpty, error == .status || error == .unauthorized {
            self = .server(message)
            return
        }
        switch error {
        case .imageTooLarge: self = .localized(.errorImageTooLarge, arguments: ["5"])
        case .timedOut: self = .key(.errorTimedOut)
        case .unauthorized: self = .key(.errorUnauthorized)
        case .status: self = .localized(.errorServer, arguments: [error.status.map(String.init) ?? "?"])
        case .decoding: self = .key(.errorUnexpectedAnswer)
        default: self = .key(.errorNetwork)
        }
    }
}
