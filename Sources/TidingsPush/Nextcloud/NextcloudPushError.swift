import TidingsCore

/// A `NextcloudPushError` says why a Nextcloud push could not be used, never with the push's content,
/// a key or a token in it.
///
/// Compare kinds with the static members (`catch NextcloudPushError.invalidSignature`); `==` ignores context.
public struct NextcloudPushError: TidingsError {
    /// The kinds of failure; not public, so a kind added later breaks no caller's `switch`.
    enum Code: String, Sendable {
        case malformedMessage, invalidSignature, undecryptable, malformedSubject
    }

    let code: Code

    /// The kind of failure (compare with the static members).
    public var kind: TidingsErrorKind { TidingsErrorKind(code) }

    /// What was wrong, without payloads or secrets.
    public let detail: String?

    init(_ code: Code, detail: String? = nil) {
        self.code = code
        self.detail = detail
    }

    /// The push's envelope is not `{"subject": base64, "signature": base64}`.
    public static let malformedMessage = NextcloudPushError(.malformedMessage)
    /// The signature is not the account's (user public key) over the encrypted subject: dropped unread.
    public static let invalidSignature = NextcloudPushError(.invalidSignature)
    /// The subject is not one RSA block this device's key decrypts.
    public static let undecryptable = NextcloudPushError(.undecryptable)
    /// The decrypted subject is not one of the protocol's JSON shapes.
    public static let malformedSubject = NextcloudPushError(.malformedSubject)

    static func malformedMessage(_ detail: String) -> NextcloudPushError { .init(.malformedMessage, detail: detail) }
    static func malformedSubject(_ detail: String) -> NextcloudPushError { .init(.malformedSubject, detail: detail) }

    /// The kind and detail; never the push's content.
    public var description: String {
        detail.map { "NextcloudPushError.\(code.rawValue): \($0)" } ?? "NextcloudPushError.\(code.rawValue)"
    }
}
