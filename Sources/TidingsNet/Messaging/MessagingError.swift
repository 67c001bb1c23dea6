/// Why a request of a message-based protocol got no response.
///
/// Callers match kinds with the static members (`error == .timeout` compares kinds only); a
/// protocol's client maps them to its own error type. `description` never contains message content.
public struct MessagingError: Error, Sendable, CustomStringConvertible, Hashable {
    /// The kinds of failure; new kinds break no caller because the enum is not public.
    enum Code: String, Sendable {
        case timeout, connectionLost, notConnected, closed, cancelled, tooManyPending
    }

    let code: Code
    /// What went wrong, without secrets or message text.
    public let detail: String?

    init(_ code: Code, detail: String? = nil) {
        self.code = code
        self.detail = detail
    }

    /// No response arrived within the request's timeout.
    public static let timeout = MessagingError(.timeout)
    /// The connection ended while the request waited for its response, or sending it failed.
    public static let connectionLost = MessagingError(.connectionLost)
    /// There was no connection to send the request on.
    public static let notConnected = MessagingError(.notConnected)
    /// The client was closed.
    public static let closed = MessagingError(.closed)
    /// The task waiting for the response was cancelled.
    public static let cancelled = MessagingError(.cancelled)
    /// Every request ID is in use by a pending request.
    public static let tooManyPending = MessagingError(.tooManyPending)

    /// The same kind with `detail` attached.
    public func with(detail: String) -> MessagingError { MessagingError(code, detail: detail) }

    /// Whether two errors are of the same kind (the detail is ignored).
    public static func == (lhs: MessagingError, rhs: MessagingError) -> Bool { lhs.code == rhs.code }

    /// Hashes the kind only, consistently with `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// The kind and detail, e.g. `MessagingError.timeout: no answer in 10 seconds`.
    public var description: String {
        "MessagingError.\(code.rawValue)" + (detail.map { ": \($0)" } ?? "")
    }
}
