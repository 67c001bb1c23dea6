import TidingsCore

/// An `OpenMatesError` describes why an OpenMates operation failed, with the context needed to act on it.
///
/// Callers match kinds with the static members (`catch OpenMatesError.notAvailableOffline`); `==` compares
/// kinds only. `description` never contains tokens, cookies, message content or keys.
public struct OpenMatesError: TidingsError {
    /// The kinds of failure; new kinds break no caller because the enum is not public.
    enum Code: String, Sendable {
        case malformedFrame, malformedPayload, server, initialSyncFailed, notConnected, connectionLost
        case store, closed, loggedOut, notAvailableOffline, contentUnavailable, connectionFailed, actionFailed
    }

    let code: Code

    /// The kind of failure (compare with the static members, e.g. `error == .closed`).
    public var kind: TidingsErrorKind { TidingsErrorKind(code) }

    /// The event type or operation that failed (`phase_1b_chat_content_ready`, `store.open`).
    public let operation: String?
    /// What went wrong, without secrets or content.
    public let detail: String?
    /// The chats the failure concerns, when it names some (a content batch's `partial_error`).
    public let chatIDs: [String]

    init(_ code: Code, operation: String? = nil, detail: String? = nil, chatIDs: [String] = []) {
        self.code = code
        self.operation = operation
        self.detail = detail
        self.chatIDs = chatIDs
    }

    /// A frame that is not JSON, or not a `{type, payload}` envelope.
    public static let malformedFrame = OpenMatesError(.malformedFrame)
    /// A payload whose required field is missing or has the wrong shape.
    public static let malformedPayload = OpenMatesError(.malformedPayload)
    /// The server sent an `error` event.
    public static let server = OpenMatesError(.server)
    /// The server sent `initial_sync_error`.
    public static let initialSyncFailed = OpenMatesError(.initialSyncFailed)
    /// There is no open connection to send on.
    public static let notConnected = OpenMatesError(.notConnected)
    /// The connection ended while something waited on it.
    public static let connectionLost = OpenMatesError(.connectionLost)
    /// Reconnecting failed too many times in a row; the client stopped trying.
    public static let connectionFailed = OpenMatesError(.connectionFailed)
    /// The local store could not be read or written; nothing was half-applied.
    public static let store = OpenMatesError(.store)
    /// The client was closed by the app.
    public static let closed = OpenMatesError(.closed)
    /// The server ended the session (`force_logout`) or the app logged out.
    public static let loggedOut = OpenMatesError(.loggedOut)
    /// The chat's content is not stored on this device and there is no connection to fetch it.
    public static let notAvailableOffline = OpenMatesError(.notAvailableOffline)
    /// The server could not deliver some chats' content (`partial_error` of a content batch).
    public static let contentUnavailable = OpenMatesError(.contentUnavailable)

    /// An offline action failed for good: refused or unanswered on its last try (the reason is in `detail`).
    public static let actionFailed = OpenMatesError(.actionFailed)

    static func malformedFrame(_ detail: String) -> OpenMatesError { OpenMatesError(.malformedFrame, detail: detail) }
    static func malformedPayload(_ type: String, _ detail: String) -> OpenMatesError {
        OpenMatesError(.malformedPayload, operation: type, detail: detail)
    }

    /// The kind, operation, detail and chat count, e.g. `OpenMatesError.contentUnavailable(chat_content_batch_response): 2 chats`.
    public var description: String {
        var text = "OpenMatesError.\(code.rawValue)"
        if let operation { text += "(\(operation))" }
        if let detail { text += ": \(detail)" }
        if !chatIDs.isEmpty { text += " [\(chatIDs.count) chat(s)]" }
        return text
    }
}
