import TidingsCore

/// An `OpenMatesCryptoError` says why one encrypted OpenMates value (a content blob or a wrapped key) did not
/// decrypt.
///
/// It concerns that value only: the other messages of a chat still decrypt. Match kinds with the static
/// members (`catch OpenMatesCryptoError.fingerprintMismatch`); `==` compares kinds only. Neither the error nor
/// its `description` ever holds key bytes, ciphertext or plaintext.
public struct OpenMatesCryptoError: TidingsError {
    enum Code: String, Sendable {
        case empty, notBase64, tooShort, fingerprintMismatch, authenticationFailed, invalidChatKey, notText
        case noChatKey, hiddenChatLocked, noEmbedKey, invalidUnlockSecret
    }

    let code: Code
    /// What was refused and why (sizes and names, never bytes).
    public let detail: String?

    init(_ code: Code, detail: String? = nil) {
        self.code = code
        self.detail = detail
    }

    /// The kind of failure (compare with the static members, e.g. `error == .notBase64`).
    public var kind: TidingsErrorKind { TidingsErrorKind(code) }

    /// The value was an empty string.
    public static let empty = OpenMatesCryptoError(.empty)
    /// The value is not base64 text.
    public static let notBase64 = OpenMatesCryptoError(.notBase64)
    /// The decoded bytes are too few to hold an IV and a GCM tag (and the header, for the "OM" form).
    public static let tooShort = OpenMatesCryptoError(.tooShort)
    /// An "OM" blob names another key by its fingerprint: it was sealed under a different chat key.
    public static let fingerprintMismatch = OpenMatesCryptoError(.fingerprintMismatch)
    /// AES-GCM refused the tag: the bytes were altered or the key is not the one they were sealed with.
    public static let authenticationFailed = OpenMatesCryptoError(.authenticationFailed)
    /// A wrapped chat key decrypted, but not to a 128- or 256-bit key.
    public static let invalidChatKey = OpenMatesCryptoError(.invalidChatKey)
    /// The plaintext is not UTF-8 text where text was expected.
    public static let notText = OpenMatesCryptoError(.notText)
    /// The chat has no wrapped key (or is not stored), so nothing of it can be decrypted.
    public static let noChatKey = OpenMatesCryptoError(.noChatKey)

    /// The chat's key does not unwrap under the master key: the web client's sign of a hidden chat, whose key is
    /// wrapped by a secret derived from the master key and the user's hide password
    /// (``OpenMatesHiddenChatUnlock``). It stays locked until the app supplies an unlock that opens it; a
    /// damaged wrapped key looks the same, as it does to the web client.
    public static let hiddenChatLocked = OpenMatesCryptoError(.hiddenChatLocked)
    /// No stored embed key entry (for the embed or its parent) opens with the keys at hand.
    public static let noEmbedKey = OpenMatesCryptoError(.noEmbedKey)
    /// A hidden-chat unlock was refused before any derivation: a password outside 4…30 characters or no salt.
    public static let invalidUnlockSecret = OpenMatesCryptoError(.invalidUnlockSecret)

    /// The kind with its detail, e.g. `OpenMatesCryptoError.tooShort(20 bytes, at least 28)`.
    public var description: String {
        guard let detail else { return "OpenMatesCryptoError.\(code.rawValue)" }
        return "OpenMatesCryptoError.\(code.rawValue)(\(detail))"
    }
}
