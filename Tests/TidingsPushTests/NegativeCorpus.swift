import TidingsCore

@testable import TidingsPush

/// Messages built record by record with the real key schedule, so that a test can put any plaintext framing
/// (a wrong delimiter, bad padding) under a valid tag: the decoder must then refuse the framing itself.
struct CraftedMessages {
    let keys: WebPushSubscriptionKeys
    let sender: TidingsCrypto.P256.KeyAgreement.PrivateKey
    let salt: [UInt8]

    init(keys: WebPushSubscriptionKeys) throws {
        self.keys = keys
        sender = try TidingsCrypto.P256.KeyAgreement.PrivateKey()
        salt = TidingsCrypto.SecureRandom.bytes(16)
    }

    private var secret: [UInt8] {
        get throws {
            try sender.sharedSecretFromKeyAgreement(with: keys.privateKey.publicKey)
        }
    }

    /// An `aes128gcm` body whose records hold exactly `records` (delimiters and padding included), with the
    /// header's record size `recordSize`.
    func aes128gcm(records: [[UInt8]], recordSize: Int) throws -> [UInt8] {
        let senderPublic = sender.publicKey.x963Representation
        let ikm = try WebPushKeyDerivation.webPushInputKeyingMaterial(
            sharedSecret: secret, authSecret: keys.authSecret, receiverPublicKey: keys.publicKey,
            senderPublicKey: senderPublic)
        let content = try WebPushKeyDerivation.aes128gcm(inputKeyingMaterial: ikm, salt: salt)
        let size = UInt32(recordSize)
        var body =
            salt + [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF), 65]
            + senderPublic
        for (index, record) in records.enumerated() {
            body += try ECERecords.seal(record, key: content.key, nonce: ECERecords.nonce(content.nonce, index: index))
        }
        return body
    }

    /// An `aesgcm` body whose records hold exactly `records` (padding lengths included), and its parameters.
    func aesgcm(records: [[UInt8]], recordSize: Int = 4096) throws -> ([UInt8], WebPushLegacyParameters) {
        let senderPublic = sender.publicKey.x963Representation
        let content = try WebPushKeyDerivation.aesgcm(
            sharedSecret: secret, authSecret: keys.authSecret, salt: salt, receiverPublicKey: keys.publicKey,
            senderPublicKey: senderPublic)
        var body: [UInt8] = []
        for (index, record) in records.enumerated() {
            body += try ECERecords.seal(record, key: content.key, nonce: ECERecords.nonce(content.nonce, index: index))
        }
        return (body, try WebPushLegacyParameters(senderPublicKey: senderPublic, salt: salt, recordSize: recordSize))
    }
}
