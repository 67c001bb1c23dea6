import TidingsCore

/// A Web Push message encrypted the way an application server (Mastodon) encrypts one.
public struct WebPushEncryptedMessage: Sendable {
    /// The encoding of ``body``.
    public let encoding: WebPushContentEncoding
    /// The request body.
    public let body: [UInt8]
    /// For `aesgcm`: the sender key, salt and record size that travel in headers; nil for `aes128gcm`, whose
    /// body carries them.
    public let legacy: WebPushLegacyParameters?

    /// The headers a server sends with ``body``: `Content-Encoding`, and for `aesgcm` `Crypto-Key` and
    /// `Encryption` (a VAPID server adds its `p256ecdsa` to `Crypto-Key` itself).
    public var headers: [(name: String, value: String)] {
        var headers = [(name: "Content-Encoding", value: encoding.rawValue)]
        if let legacy {
            headers.append((name: "Crypto-Key", value: legacy.cryptoKeyHeader))
            headers.append((name: "Encryption", value: legacy.encryptionHeader))
        }
        return headers
    }
}

/// Encrypts Web Push messages for a subscription, as a push-sending server does: for the sandbox that sends
/// real Web Push, for tests and benchmarks. An app never needs it.
///
/// Each message uses a fresh ephemeral sender key and a random salt unless the caller fixes them (the RFC's
/// examples do), so no two messages share a content key.
public enum WebPushEncryptor {
    /// Encrypts `plaintext` for the subscription with public key `receiverPublicKey` (65 bytes) and
    /// `authSecret` (16 bytes).
    ///
    /// - Parameters:
    ///   - plaintext: The message (a push service takes at most 3993 bytes in one 4096-byte `aes128gcm` record).
    ///   - receiverPublicKey: The subscription's 65-byte public key (`keys[p256dh]`).
    ///   - authSecret: The subscription's 16-byte auth secret (`keys[auth]`).
    ///   - encoding: `aes128gcm` (RFC 8291) or the legacy `aesgcm`.
    ///   - recordSize: `aes128gcm`: the record size including tag and delimiter (at least 18; 4096 puts up to
    ///     3993 bytes in the single record RFC 8291 asks for); `aesgcm`: plaintext bytes per record (at least 3).
    ///   - senderKey: the ephemeral key; a fresh one when nil.
    ///   - salt: 16 bytes; random when nil.
    /// - Throws: ``WebPushError/invalidKey`` for a receiver key not on the curve or an auth secret that is not 16
    ///   bytes, ``WebPushError/invalidRecordSize``, ``WebPushError/invalidParameter`` for a salt of another size.
    public static func encrypt(
        _ plaintext: [UInt8], receiverPublicKey: [UInt8], authSecret: [UInt8], encoding: WebPushContentEncoding,
        recordSize: Int = 4096, senderKey: TidingsCrypto.P256.KeyAgreement.PrivateKey? = nil, salt: [UInt8]? = nil
    ) throws(WebPushError) -> WebPushEncryptedMessage {
        guard authSecret.count == WebPushSubscriptionKeys.authSecretByteCount else {
            throw .with(.invalidKey, "auth secret must be 16 bytes, got \(authSecret.count)")
        }
        let sender: TidingsCrypto.P256.KeyAgreement.PrivateKey
        do {
            sender = try senderKey ?? TidingsCrypto.P256.KeyAgreement.PrivateKey()
        } catch {
            throw .with(.platformFailure, "\(error)")
        }
        let salt = salt ?? TidingsCrypto.SecureRandom.bytes(16)
        let senderPublicKey = sender.publicKey.x963Representation
        let secret = try WebPushKeyDerivation.sharedSecret(
            sender, with: receiverPublicKey, refused: .invalidKey, what: "receiver public key")
        switch encoding {
        case .aes128gcm:
            let ikm = try WebPushKeyDerivation.webPushInputKeyingMaterial(
                sharedSecret: secret, authSecret: authSecret, receiverPublicKey: receiverPublicKey,
                senderPublicKey: senderPublicKey)
            let body = try RFC8188Content.seal(
                plaintext, inputKeyingMaterial: ikm, salt: salt, recordSize: recordSize, keyID: senderPublicKey)
            return WebPushEncryptedMessage(encoding: .aes128gcm, body: body, legacy: nil)
        case .aesgcm:
            let legacy = try WebPushLegacyParameters(
                senderPublicKey: senderPublicKey, salt: salt, recordSize: recordSize)
            let content = try WebPushKeyDerivation.aesgcm(
                sharedSecret: secret, authSecret: authSecret, salt: salt, receiverPublicKey: receiverPublicKey,
                senderPublicKey: senderPublicKey)
            let body = try ECERecords.sealAESGCM(
                plaintext, key: content.key, nonce: content.nonce, recordSize: recordSize)
            return WebPushEncryptedMessage(encoding: .aesgcm, body: body, legacy: legacy)
        }
    }
}
