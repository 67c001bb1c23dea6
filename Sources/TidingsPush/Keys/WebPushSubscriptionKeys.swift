import TidingsCore

/// The keys a Web Push subscription hands to the server: a P-256 key pair and a 16-byte auth secret (RFC 8291 §2).
///
/// One set per account. The public key (`keys[p256dh]`) and the auth secret (`keys[auth]`) go to the server
/// when subscribing; the private key never leaves the device. All three serialise as base64url so that they
/// can be stored (the durable store keeps them encrypted at rest) and typed on a command line.
///
/// Its `description` and mirror show the public key only: a set of keys logged or dumped leaks no secret.
public struct WebPushSubscriptionKeys: Sendable, CustomStringConvertible, CustomReflectable {
    /// The byte count of an auth secret (RFC 8291 §3.2).
    public static let authSecretByteCount = 16

    /// The subscription's private key.
    ///
    /// - Warning: Secret. Store it only where the app keeps secrets.
    public let privateKey: TidingsCrypto.P256.KeyAgreement.PrivateKey
    /// The 16-byte auth secret shared with the server.
    ///
    /// - Warning: Secret: with the public key it lets anyone encrypt messages this subscription accepts.
    public let authSecret: [UInt8]

    /// The 65-byte uncompressed public key (`0x04 ‖ x ‖ y`), the subscription's `keys[p256dh]`.
    public var publicKey: [UInt8] { privateKey.publicKey.x963Representation }

    /// A fresh key pair and auth secret from the secure random source.
    ///
    /// - Throws: ``WebPushError/invalidKey`` when the platform library fails to make a key.
    public static func generate() throws(WebPushError) -> WebPushSubscriptionKeys {
        do {
            return WebPushSubscriptionKeys(
                privateKey: try TidingsCrypto.P256.KeyAgreement.PrivateKey(),
                authSecret: TidingsCrypto.SecureRandom.bytes(authSecretByteCount))
        } catch {
            throw .with(.invalidKey, "key generation failed: \(error)")
        }
    }

    /// Keys from their raw bytes: a 32-byte private scalar and a 16-byte auth secret.
    ///
    /// - Throws: ``WebPushError/invalidKey`` when the scalar is not a valid P-256 private key or the secret is
    ///   not 16 bytes (the error names which, never the bytes).
    public init(privateKey: [UInt8], authSecret: [UInt8]) throws(WebPushError) {
        guard authSecret.count == Self.authSecretByteCount else {
            throw .with(.invalidKey, "auth secret must be 16 bytes, got \(authSecret.count)")
        }
        do {
            self.privateKey = try TidingsCrypto.P256.KeyAgreement.PrivateKey(rawRepresentation: privateKey)
        } catch {
            throw .with(.invalidKey, "private key is not a P-256 scalar (\(privateKey.count) bytes)")
        }
        self.authSecret = authSecret
    }

    /// Keys from their base64url forms, as ``base64URLPrivateKey`` and ``base64URLAuthSecret`` write them.
    ///
    /// - Throws: ``WebPushError/invalidParameter`` for text that is not base64url, ``WebPushError/invalidKey`` for
    ///   bytes that are not keys.
    public init(base64URLPrivateKey: String, base64URLAuthSecret: String) throws(WebPushError) {
        try self.init(
            privateKey: WebPushBase64URL.decode(base64URLPrivateKey, what: "private key"),
            authSecret: WebPushBase64URL.decode(base64URLAuthSecret, what: "auth secret"))
    }

    init(privateKey: TidingsCrypto.P256.KeyAgreement.PrivateKey, authSecret: [UInt8]) {
        self.privateKey = privateKey
        self.authSecret = authSecret
    }

    /// The public key as base64url: the subscription's `keys[p256dh]`.
    public var base64URLPublicKey: String { WebPushBase64URL.encode(publicKey) }
    /// The auth secret as base64url: the subscription's `keys[auth]`.
    ///
    /// - Warning: Secret.
    public var base64URLAuthSecret: String { WebPushBase64URL.encode(authSecret) }
    /// The 32-byte private scalar as base64url.
    ///
    /// - Warning: Secret.
    public var base64URLPrivateKey: String { WebPushBase64URL.encode(privateKey.rawRepresentation) }

    /// `WebPushSubscriptionKeys(public: <base64url>, private and auth redacted)`.
    public var description: String {
        "WebPushSubscriptionKeys(public: \(base64URLPublicKey), private and auth redacted)"
    }
    /// Shows the public key only, so `dump(_:)` cannot print a secret.
    public var customMirror: Mirror {
        Mirror(self, children: ["publicKey": base64URLPublicKey], displayStyle: .struct)
    }
}
