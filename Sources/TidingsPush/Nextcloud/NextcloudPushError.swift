import TidingsCore

/// A `NextcloudPushError` says why a Nextcloud push could not be used, never with the push's content,
/// a key or a token in it.
///
/// Compare kinds with the static members (`catch NextcloudPushError.invalidSignature`); `==` ignores context.
public struct NextcloudPushError: TidingsError {
    /// The kinds of failure; not public, so a kind added later breaks no caller's `switch`.
    enum Code: String, Sendable {
        case malformedMessage, invalidSignature, undecryptable, malformedSubject
        case unauthorized, refused, malformedResponse, transport
        case keyUnavailable, loginExpired, notRegistered
    }

    let code: Code

    /// The kind of failure (compare with the static members).
    public var kind: TidingsErrorKind { TidingsErrorKind(code) }

    /// What was wrong, without payloads or secrets (for ``refused``, the server's OCS message such as
    /// `INVALID_PUSHTOKEN_HASH`).
    public let detail: String?
    /// The HTTP status, for ``unauthorized`` and ``refused``.
    public let status: Int?
    /// Which step failed, for registration errors: `server` (the Nextcloud server) or `proxy`.
    public let step: String?

    init(_ code: Code, detail: String? = nil, status: Int? = nil, step: String? = nil) {
        self.code = code
        self.detail = detail
        self.status = status
        self.step = step
    }

    /// The push's envelope is not `{"subject": base64, "signature": base64}`.
    public static let malformedMessage = NextcloudPushError(.malformedMessage)
    /// The signature is not the account's (user public key) over the encrypted subject: dropped unread.
    public static let invalidSignature = NextcloudPushError(.invalidSignature)
    /// The subject is not one RSA block this device's key decrypts.
    public static let undecryptable = NextcloudPushError(.undecryptable)
    /// The decrypted subject is not one of the protocol's JSON shapes.
    public static let malformedSubject = NextcloudPushError(.malformedSubject)

    /// The server refused the credentials (401): the account must sign in again.
    public static let unauthorized = NextcloudPushError(.unauthorized)
    /// The server or the proxy refused the request with another status (``status``, ``detail``).
    public static let refused = NextcloudPushError(.refused)
    /// A success answer without the fields the protocol promises (`publicKey`, `deviceIdentifier`…).
    public static let malformedResponse = NextcloudPushError(.malformedResponse)
    /// The request got no HTTP answer (connection, TLS, timeout, cancellation).
    public static let transport = NextcloudPushError(.transport)

    /// The stored device key cannot be used as given (sealed, and the app gave no cipher to open it).
    public static let keyUnavailable = NextcloudPushError(.keyUnavailable)
    /// Login Flow v2 ended without a login: the person did not grant access before the flow's deadline.
    public static let loginExpired = NextcloudPushError(.loginExpired)
    /// No subscription is stored for the account (never registered, or signed out): its pushes cannot be opened.
    public static let notRegistered = NextcloudPushError(.notRegistered)

    static func malformedMessage(_ detail: String) -> NextcloudPushError { .init(.malformedMessage, detail: detail) }
    static func malformedSubject(_ detail: String) -> NextcloudPushError { .init(.malformedSubject, detail: detail) }

    /// The kind and detail; never the push's content.
    public var description: String {
        var text = "NextcloudPushError.\(code.rawValue)"
        if let step { text += " at \(step)" }
        if let status { text += " (HTTP \(status))" }
        if let detail { text += ": \(detail)" }
        return text
    }
}
