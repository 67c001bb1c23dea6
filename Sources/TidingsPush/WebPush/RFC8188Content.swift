/// RFC 8188 `aes128gcm` with the input keying material given directly (no ECDH): the layer under Web Push,
/// kept separate so that the RFC's own examples (§3.1, §3.2) test it.
enum RFC8188Content {
    /// Decrypts `body` (header and records) with `inputKeyingMaterial`; any key id is accepted and returned.
    static func open(_ body: [UInt8], inputKeyingMaterial: [UInt8]) throws(WebPushError) -> (
        plaintext: [UInt8], keyID: [UInt8]
    ) {
        let header = try AES128GCMHeader(body)
        let content = try WebPushKeyDerivation.aes128gcm(inputKeyingMaterial: inputKeyingMaterial, salt: header.salt)
        let plaintext = try ECERecords.openAES128GCM(
            body[header.contentStart...], key: content.key, nonce: content.nonce, recordSize: header.recordSize)
        return (plaintext, Array(header.keyID))
    }

    /// The header `salt ‖ rs ‖ idlen ‖ keyid` followed by `plaintext` in records of `recordSize`.
    static func seal(
        _ plaintext: [UInt8], inputKeyingMaterial: [UInt8], salt: [UInt8], recordSize: Int, keyID: [UInt8]
    ) throws(WebPushError) -> [UInt8] {
        guard salt.count == 16 else { throw .with(.invalidParameter, "salt must be 16 bytes, got \(salt.count)") }
        guard recordSize >= ECERecords.minimumAES128GCMRecordSize, recordSize <= Int(UInt32.max) else {
            throw .with(.invalidRecordSize, "aes128gcm record size must be 18 to \(UInt32.max)")
        }
        guard keyID.count <= 255 else { throw .with(.invalidKeyID, "a key id has at most 255 bytes") }
        let content = try WebPushKeyDerivation.aes128gcm(inputKeyingMaterial: inputKeyingMaterial, salt: salt)
        let size = UInt32(recordSize)
        let header =
            salt + [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)]
            + [UInt8(keyID.count)] + keyID
        return header
            + (try ECERecords.sealAES128GCM(plaintext, key: content.key, nonce: content.nonce, recordSize: recordSize))
    }
}
