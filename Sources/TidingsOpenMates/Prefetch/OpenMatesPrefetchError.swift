import TidingsCore

/// Why one offline-prefetch request or page failed; the store is left as it was before the page.
///
/// Callers match kinds with the static members (`catch OpenMatesPrefetchError.timedOut`); `==` compares kinds
/// only. `description` never contains the session cookie, a body or message content.
public struct OpenMatesPrefetchError: TidingsError {
    /// The kinds of failure; not public, so a new kind breaks no caller's `switch`.
    enum Code: String, Sendable {
        case malformedPage, unauthorized, status, timedOut, transport, store, cursorStalled, invalidConfiguration
    }

    let code: Code

    /// The kind of failure (compare with the static members).
    public var kind: TidingsErrorKind { TidingsErrorKind(code) }

    /// The HTTP status, when the server answered with one that is not a page.
    public let status: Int?
    /// What went wrong, without secrets or content.
    public let detail: String?

    init(_ code: Code, status: Int? = nil, detail: String? = nil) {
        self.code = code
        self.status = status
        self.detail = detail
    }

    /// The body is not a prefetch page: not JSON, too deep or too large, not an object, or a field of the
    /// wrong shape (`chats` not a list, neither `done` nor `next_cursor`, …).
    public static let malformedPage = OpenMatesPrefetchError(.malformedPage)
    /// The server refused the session (401 or 403): the `auth_refresh_token` cookie is missing or no longer
    /// valid. Prefetch stays stopped until it is started again.
    public static let unauthorized = OpenMatesPrefetchError(.unauthorized)
    /// The server answered with a status that carries no page (a 5xx, a 4xx other than 401/403/429).
    public static let status = OpenMatesPrefetchError(.status)
    /// No answer within the request's deadline on the prefetcher's clock; the request was cancelled.
    public static let timedOut = OpenMatesPrefetchError(.timedOut)
    /// The request could not be sent or its answer not read (refused, reset, too large).
    public static let transport = OpenMatesPrefetchError(.transport)
    /// The page could not be written (or the store read); nothing of it was stored.
    public static let store = OpenMatesPrefetchError(.store)
    /// The server's `next_cursor` does not move past the cursor asked for without saying `done`: following
    /// it would ask for the same page forever.
    public static let cursorStalled = OpenMatesPrefetchError(.cursorStalled)

    /// The transport cannot be built as configured (an origin that is not http(s), a token that cannot be a
    /// cookie value).
    public static let invalidConfiguration = OpenMatesPrefetchError(.invalidConfiguration)

    static func malformedPage(_ detail: String) -> OpenMatesPrefetchError {
        OpenMatesPrefetchError(.malformedPage, detail: detail)
    }

    /// The kind, status and detail, e.g. `OpenMatesPrefetchError.status(500)`.
    public var description: String {
        var text = "OpenMatesPrefetchError.\(code.rawValue)"
        if let status { text += "(\(status))" }
        if let detail { text += ": \(detail)" }
        return text
    }
}
