/// A `CryptoError` says why a cryptographic operation refused its input or failed.
///
/// Every case carries enough context to act on, but never key bytes or plaintext.
public enum CryptoError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A key had a byte count the algorithm does not accept (AES takes 16 or 32).
    case invalidKeySize(Int)
    /// A nonce had a byte count the algorithm does not accept (AES-GCM takes 12).
    case invalidNonceSize(Int)
    /// The ciphertext, tag, nonce, associated data or key do not match: the data was tampered
    /// with or the key is wrong. Nothing of the plaintext is returned.
    case authenticationFailure
    /// An RSA ciphertext did not decrypt under this key with this padding (wrong key, wrong padding,
    /// or not a ciphertext at all). Nothing of the plaintext is returned. PKCS#1 v1.5 decryption
    /// throws it only for a block not below the modulus: bad padding there is rejected implicitly.
    case decryptionFailure
    /// Key material could not be read (wrong length, not on the curve, not a PEM key of the right kind).
    case invalidKey(String)
    /// Input was malformed or too large for the operation (the text says which and why).
    case invalidInput(String)
    /// The platform library failed for a reason outside the caller's control (names the call).
    case backend(String)

    public var description: String {
        switch self {
        case .invalidKeySize(let count): "CryptoError.invalidKeySize(\(count) bytes)"
        case .invalidNonceSize(let count): "CryptoError.invalidNonceSize(\(count) bytes)"
        case .authenticationFailure: "CryptoError.authenticationFailure"
        case .decryptionFailure: "CryptoError.decryptionFailure"
        case .invalidKey(let reason): "CryptoError.invalidKey(\(reason))"
        case .invalidInput(let reason): "CryptoError.invalidInput(\(reason))"
        case .backend(let call): "CryptoError.backend(\(call))"
        }
    }
}
