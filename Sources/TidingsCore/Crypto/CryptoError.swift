/// A `CryptoError` says why a cryptographic operation refused its input or failed.
///
/// It follows ``TidingsError``: compare or catch by kind (`catch CryptoError.authenticationFailure`), read
/// the context from ``byteCount`` and ``detail``. Neither it nor its `description` ever holds key bytes or
/// plaintext.
public struct CryptoError: TidingsError {
    enum Code: String, Sendable {
        case invalidKeySize, invalidNonceSize, authenticationFailure, decryptionFailure, invalidKey
        case invalidInput, backend
    }

    let code: Code
    /// For `invalidKeySize` and `invalidNonceSize`: the byte count that was refused.
    public let byteCount: Int?
    /// For `invalidKey` and `invalidInput`: which input and why; for `backend`: the platform call that failed.
    public let detail: String?

    init(_ code: Code, byteCount: Int? = nil, detail: String? = nil) {
        self.code = code
        self.byteCount = byteCount
        self.detail = detail
    }

    /// The kind of failure (compare with the static members, e.g. `error == .authenticationFailure`).
    public var kind: TidingsErrorKind { TidingsErrorKind(code) }

    /// A key had a byte count the algorithm does not accept (AES takes 16 or 32).
    public static let invalidKeySize = CryptoError(.invalidKeySize)
    /// A nonce had a byte count the algorithm does not accept (AES-GCM takes 12).
    public static let invalidNonceSize = CryptoError(.invalidNonceSize)
    /// The ciphertext, tag, nonce, associated data or key do not match: the data was tampered
    /// with or the key is wrong. Nothing of the plaintext is returned.
    public static let authenticationFailure = CryptoError(.authenticationFailure)
    /// An RSA ciphertext did not decrypt under this key with this padding (wrong key, wrong padding,
    /// or not a ciphertext at all). Nothing of the plaintext is returned. PKCS#1 v1.5 decryption
    /// throws it only for a block not below the modulus: bad padding there is rejected implicitly.
    public static let decryptionFailure = CryptoError(.decryptionFailure)
    /// Key material could not be read (wrong length, not on the curve, not a PEM key of the right kind).
    public static let invalidKey = CryptoError(.invalidKey)
    /// Input was malformed or too large for the operation (``detail`` says which and why).
    public static let invalidInput = CryptoError(.invalidInput)
    /// The platform library failed for a reason outside the caller's control (``detail`` names the call).
    public static let backend = CryptoError(.backend)

    /// An `invalidKeySize` error for a key of `count` bytes.
    public static func invalidKeySize(_ count: Int) -> CryptoError { CryptoError(.invalidKeySize, byteCount: count) }
    /// An `invalidNonceSize` error for a nonce of `count` bytes.
    public static func invalidNonceSize(_ count: Int) -> CryptoError {
        CryptoError(.invalidNonceSize, byteCount: count)
    }
    /// An `invalidKey` error saying why the key material was refused (never the key itself).
    public static func invalidKey(_ reason: String) -> CryptoError { CryptoError(.invalidKey, detail: reason) }
    /// An `invalidInput` error saying which input was refused and why (never its bytes).
    public static func invalidInput(_ reason: String) -> CryptoError { CryptoError(.invalidInput, detail: reason) }
    /// A `backend` error naming the platform call that failed.
    public static func backend(_ call: String) -> CryptoError { CryptoError(.backend, detail: call) }

    /// The kind with its byte count or reason, e.g. `CryptoError.invalidKeySize(24 bytes)`.
    public var description: String {
        if let byteCount { return "\(shortDescription)(\(byteCount) bytes)" }
        if let detail { return "\(shortDescription)(\(detail))" }
        return shortDescription
    }
}
