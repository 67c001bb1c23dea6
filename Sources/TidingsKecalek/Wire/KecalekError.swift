import TidingsCore

/// A `KecalekError` describes why a Kecalek operation failed, with the context needed to act on it.
///
/// Callers match kinds with the static members (`catch let error as KecalekError where error == .timeout`
/// compares kinds only). `description` never contains message content or keys.
public struct KecalekError: TidingsError {
    /// The kinds of failure; new kinds break no caller because the enum is not public.
    enum Code: String, Sendable {
        case malformedFrame, malformedMessage, server, timeout, notConnected, connectionLost
        case decryption, missingKey, cache, closed, cancelled
    }

    let code: Code

    /// The kind of failure (compare with the static members, e.g. `error == .closed`).
    public var kind: TidingsErrorKind { TidingsErrorKind(code) }

    /// The request type or operation that failed (`get_messages`, `mark_read`, `cache.write`).
    public let operation: String?
    /// What went wrong, without secrets or message text.
    public let detail: String?

    init(_ code: Code, operation: String? = nil, detail: String? = nil) {
        self.code = code
        self.operation = operation
        self.detail = detail
    }

    /// A frame that was not JSON or not a Kecalek envelope.
    public static let malformedFrame = KecalekError(.malformedFrame)
    /// A message object that lacks a required field or has one of the wrong shape.
    public static let malformedMessage = KecalekError(.malformedMessage)
    /// The server answered with a status other than `ok`.
    public static let server = KecalekError(.server)
    /// No response arrived within the configured request timeout.
    public static let timeout = KecalekError(.timeout)
    /// The client is not connected and did not reconnect in time.
    public static let notConnected = KecalekError(.notConnected)
    /// The connection closed while the request was waiting for its response.
    public static let connectionLost = KecalekError(.connectionLost)
    /// A payload failed authentication or could not be decrypted.
    public static let decryption = KecalekError(.decryption)
    /// No key is known for the conversation.
    public static let missingKey = KecalekError(.missingKey)
    /// The local cache could not be read or written; nothing was half-applied.
    public static let cache = KecalekError(.cache)
    /// The client was closed by the app.
    public static let closed = KecalekError(.closed)
    /// The task waiting for the response was cancelled.
    public static let cancelled = KecalekError(.cancelled)

    static func malformedFrame(_ detail: String) -> KecalekError { KecalekError(.malformedFrame, detail: detail) }
    static func malformedMessage(_ detail: String) -> KecalekError { KecalekError(.malformedMessage, detail: detail) }

    /// The kind, operation and detail, e.g. `KecalekError.timeout(get_deleted_since): no answer in 10s`.
    public var description: String {
        var text = "KecalekError.\(code.rawValue)"
        if let operation { text += "(\(operation))" }
        if let detail { text += ": \(detail)" }
        return text
    }
}
