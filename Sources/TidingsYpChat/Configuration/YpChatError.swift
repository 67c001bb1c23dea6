import TidingsCore

/// A `YpChatError` says why a YpChat operation failed, with what a chat screen needs to show it.
///
/// Callers match kinds with the static members (`catch YpChatError.status`); context is in the
/// properties. ``message`` is the server's own text when it sent one (JSON `error`/`message`, or a
/// short plain-text body), so a state can show it as its error or feedback message. `description`
/// never contains passwords, cookies or message text.
public struct YpChatError: TidingsError {
    /// The kinds of failure; not public, so a new kind breaks no caller's `switch`.
    enum Code: String, Sendable {
        case invalidConfiguration, status, unauthorized, decoding, transport, timedOut, imageTooLarge, closed
    }

    let code: Code

    /// The kind of failure (compare with the static members, e.g. `error == .unauthorized`).
    public var kind: TidingsErrorKind { TidingsErrorKind(code) }

    /// The endpoint or setting concerned (`GET api/session`, `baseURL`).
    public let operation: String?
    /// The HTTP status, for `status` and `unauthorized`.
    public let status: Int?
    /// The server's message (or a short reason of ours), fit to show to the person.
    public let message: String?

    init(_ code: Code, operation: String? = nil, status: Int? = nil, message: String? = nil) {
        self.code = code
        self.operation = operation
        self.status = status
        self.message = message
    }

    /// The configuration is unusable (a base URL that is not an absolute http(s) URL, or plain
    /// HTTP without ``YpChatConfiguration/allowsInsecureHTTP``).
    public static let invalidConfiguration = YpChatError(.invalidConfiguration)
    /// The server answered with a status outside 2xx other than 401/403.
    public static let status = YpChatError(.status)
    /// The server answered 401 or 403 (no session, or not an admin).
    public static let unauthorized = YpChatError(.unauthorized)
    /// A 2xx body that is not the expected JSON.
    public static let decoding = YpChatError(.decoding)
    /// The request could not be sent or the connection failed.
    public static let transport = YpChatError(.transport)
    /// No answer within the timeout.
    public static let timedOut = YpChatError(.timedOut)
    /// An image over ``YpChatRESTClient/maximumImageBytes``, refused before uploading.
    public static let imageTooLarge = YpChatError(.imageTooLarge)

    /// The socket client was disconnected for good (``YpChatSocketClient/disconnect()``); make a new one.
    public static let closed = YpChatError(.closed)

    /// The kind, operation, status and message, e.g. `YpChatError.status(POST api/feedback) 400: too short`.
    public var description: String {
        var text = "YpChatError.\(code.rawValue)"
        if let operation { text += "(\(operation))" }
        if let status { text += " \(status)" }
        if let message { text += ": \(message)" }
        return text
    }
}
