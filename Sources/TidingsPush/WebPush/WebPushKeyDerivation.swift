import TidingsCore

/// The key schedules of the two encodings: from the ECDH secret and the auth secret to a content-encryption key
/// and a base nonce (RFC 8291 §3.3–3.4 with RFC 8188 §2.2–2.3; the `aesgcm` draft's "auth" and context).
enum WebPushKeyDerivation {
    typealias ContentKeys = (key: TidingsCrypto.SymmetricKey, nonce: [UInt8])

    /// The ECDH secret between `privateKey` and the P-256 point `publicPoint`.
    static func sharedSecret(
        _ privateKey: TidingsCrypto.P256.KeyAgreement.PrivateKey, with publicPoint: [UInt8],
        refused: WebPushError.Code, what: String
    ) throws(WebPushError) -> [UInt8] {
        do {
            return try privateKey.sharedSecretFromKeyAgreement(withX963Representation: publicPoint)
        } catch CryptoError.invalidKey {
            throw .with(refused, "\(what) is not an uncompressed P-256 point (\(publicPoint.count) bytes)")
        } catch {
            throw .with(.platformFailure, "\(error)")
        }
    }

    /// RFC 8188 §2.2–2.3: the content key and nonce from the input keying material and the header's salt.
    static func aes128gcm(inputKeyingMaterial: [UInt8], salt: [UInt8]) throws(WebPushError) -> ContentKeys {
        let prk = TidingsCrypto.HKDF.extract(inputKeyMaterial: inputKeyingMaterial, salt: salt)
        return try expand(
            prk, keyInfo: Array("Content-Encoding: aes128gcm\0".utf8),
            nonceInfo: Array("Content-Encoding: nonce\0".utf8))
    }

    /// RFC 8291 §3.3: the input keying material of a Web Push message,
    /// `HKDF(auth_secret, ecdh_secret, "WebPush: info" ‖ 0x00 ‖ ua_public ‖ as_public, 32)`.
    static func webPushInputKeyingMaterial(
        sharedSecret: [UInt8], authSecret: [UInt8], receiverPublicKey: [UInt8], senderPublicKey: [UInt8]
    ) throws(WebPushError) -> [UInt8] {
        try derive(
            sharedSecret, salt: authSecret, info: Array("WebPush: info\0".utf8) + receiverPublicKey + senderPublicKey,
            count: 32)
    }

    /// The `aesgcm` draft's schedule: the auth secret mixed in with "Content-Encoding: auth", then the key and
    /// nonce bound to the context `"P-256" ‖ 0x00 ‖ len ‖ ua_public ‖ len ‖ as_public`.
    static func aesgcm(
        sharedSecret: [UInt8], authSecret: [UInt8], salt: [UInt8], receiverPublicKey: [UInt8],
        senderPublicKey: [UInt8]
    ) throws(WebPushError) -> ContentKeys {
        let ikm = try derive(sharedSecret, salt: authSecret, info: Array("Content-Encoding: auth\0".utf8), count: 32)
        // Both points are 65 bytes: the two-byte lengths are 0x00 0x41.
        let context =
            Array("P-256\0".utf8) + [0, UInt8(receiverPublicKey.count)] + receiverPublicKey
            + [0, UInt8(senderPublicKey.count)] + senderPublicKey
        let prk = TidingsCrypto.HKDF.extract(inputKeyMaterial: ikm, salt: salt)
        return try expand(
            prk, keyInfo: Array("Content-Encoding: aesgcm\0".utf8) + context,
            nonceInfo: Array("Content-Encoding: nonce\0".utf8) + context)
    }

    private static func expand(_ prk: [UInt8], keyInfo: [UInt8], nonceInfo: [UInt8]) throws(WebPushError)
        -> ContentKeys
    {
        do {
            let key = try TidingsCrypto.SymmetricKey(
                bytes: TidingsCrypto.HKDF.expand(pseudoRandomKey: prk, info: keyInfo, outputByteCount: 16))
            let nonce = try TidingsCrypto.HKDF.expand(pseudoRandomKey: prk, info: nonceInfo, outputByteCount: 12)
            return (key, nonce)
        } catch {
            throw .with(.platformFailure, "\(error)")
        }
    }

    private static func derive(_ ikm: [UInt8], salt: [UInt8], info: [UInt8], count: Int) throws(WebPushError)
        -> [UInt8]
    {
        do {
            return try TidingsCrypto.HKDF.deriveKey(
                inputKeyMaterial: ikm, salt: salt, info: info, outputByteCount: count)
        } catch {
            throw .with(.platformFailure, "\(error)")
        }
    }
}
