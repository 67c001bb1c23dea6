import TidingsCore

/// The RSA-2048 key one device registers with one Nextcloud account for proxy pushes.
///
/// Generate it once per account, persist ``pemRepresentation`` where the app keeps secrets (encrypted,
/// e.g. through `ValueCipher` or the keychain) and restore it with ``init(pemRepresentation:)``: a new key
/// means registering again. Its `description` never shows key material.
public struct NextcloudDeviceKey: Sendable, CustomStringConvertible {
    /// The key pair.
    public let privateKey: TidingsCrypto.RSA.PrivateKey

    /// Generates a fresh 2048-bit key (slow: call it off the main thread).
    ///
    /// - Throws: `CryptoError` if the platform library fails.
    public init() throws(CryptoError) { privateKey = try TidingsCrypto.RSA.PrivateKey(bitCount: 2048) }

    /// Restores a key saved from ``pemRepresentation``.
    ///
    /// - Throws: `CryptoError.invalidKey` for text that is not an RSA private key.
    public init(pemRepresentation: String) throws(CryptoError) {
        privateKey = try TidingsCrypto.RSA.PrivateKey(pemRepresentation: pemRepresentation)
    }

    /// The secret to persist (PKCS#8 PEM). - Warning: secret; store it encrypted.
    public var pemRepresentation: String { privateKey.pemRepresentation }

    /// What the server receives as `devicePublicKey` (SubjectPublicKeyInfo PEM).
    public var publicKeyPEM: String { privateKey.publicKey.pemRepresentation }

    /// The size only.
    public var description: String { "NextcloudDeviceKey(\(privateKey.bitCount) bits, redacted)" }
}
