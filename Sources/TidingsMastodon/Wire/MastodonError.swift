import TidingsCore

/// A `MastodonError` says why a Mastodon or Nextcloud Social request or decoding failed, with the context
/// needed to act on it (an HTTP status, a `Retry-After`), never a token, a query string or a body.
///
/// Compare kinds with the static members (`catch MastodonError.unauthorized`); `==` ignores context.
public struct MastodonError: TidingsError {
    /// The kinds of failure; not public, so a kind added later breaks no caller's `switch`.
    enum Code: String, Sendable {
        case unauthorized, rateLimited, server, decoding, notFound, conflict, badRequest, transport
        case needsReauthentication, unsupported
    }

    let code: Code

    /// The kind of failure (compare with the static members, e.g. `error == .notFound`).
    public var kind: TidingsErrorKind { TidingsErrorKind(code) }

    /// The endpoint that failed, as a path without its query (`/api/v1/timelines/home`).
    public let endpoint: String?
    /// The HTTP status the server answered, when it answered.
    public let status: Int?
    /// How many seconds the server asked to wait (`Retry-After`), for ``rateLimited``.
    public let retryAfterSeconds: Double?
    /// What went wrong, without secrets or payloads.
    public let detail: String?

    init(
        _ code: Code, endpoint: String? = nil, status: Int? = nil, retryAfterSeconds: Double? = nil,
        detail: String? = nil
    ) {
        self.code = code
        self.endpoint = endpoint
        self.status = status
        self.retryAfterSeconds = retryAfterSeconds
        self.detail = detail
    }

    /// The server refused the token (401): the account needs to sign in again.
    public static let unauthorized = MastodonError(.unauthorized)
    /// The server or the local rate budget refused the request for now (429, or a budget waiting out a
    /// `Retry-After`); ``retryAfterSeconds`` says how long when known.
    public static let rateLimited = MastodonError(.rateLimited)
    /// The server answered with another error status (5xx, or a 4xx with no kind of its own).
    public static let server = MastodonError(.server)
    /// The body was not JSON, nested too deeply, or did not have the expected shape.
    public static let decoding = MastodonError(.decoding)
    /// The resource does not exist (404) or is gone (410).
    public static let notFound = MastodonError(.notFound)
    /// The server refused a write because its version moved on (409, e.g. a marker).
    public static let conflict = MastodonError(.conflict)
    /// The server refused the request's parameters (400 or 422).
    public static let badRequest = MastodonError(.badRequest)
    /// The request never got an HTTP answer (connection, TLS, timeout, cancellation).
    public static let transport = MastodonError(.transport)
    /// The account is in needs-reauthentication: no request is sent until it signs in again.
    public static let needsReauthentication = MastodonError(.needsReauthentication)
    /// The server does not offer what was asked (e.g. `statuses?id[]=` before Mastodon 4.3).
    public static let unsupported = MastodonError(.unsupported)

    static func decoding(_ detail: String, endpoint: String? = nil) -> MastodonError {
        MastodonError(.decoding, endpoint: endpoint, detail: detail)
    }

    /// The kind and its context, e.g. `MastodonError.rateLimited(/api/v1/timelines/home) status 429 retry after 30s`.
    public var description: String {
        var text = "MastodonError.\(code.rawValue)"
        if let endpoint { text += "(\(endpoint))" }
        if let status { text += " status \(status)" }
        if let retryAfterSeconds { text += " retry after \(retryAfterSeconds)s" }
        if let detail { text += ": \(detail)" }
        return text
    }
}
