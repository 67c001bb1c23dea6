import TidingsCore

/// Decrypts Web Push messages sent to one subscription, in either encoding.
///
/// Guarantees:
/// - Plaintext is returned only when every record's tag verifies under this subscription's keys and every
///   record's framing is valid (RFC 8188 delimiters and padding for `aes128gcm`; the draft's padding length
///   and zero padding for `aesgcm`; a final record present in both).
/// - Any malformed input — empty, truncated header or record, wrong record size, bad key id, bad delimiter or
///   padding, wrong keys, altered bytes — throws a ``WebPushError`` of its own kind; nothing traps, and no
///   length read from the input is used in arithmetic that can overflow.
/// - Neither errors nor descriptions contain key bytes, the auth secret or plaintext.
///
/// It holds no mutable state: one value can decrypt from any number of tasks at once.
public struct WebPushDecryptor: Sendable {
    /// The largest body accepted: a push service delivers at most 4096 bytes; the rest of this megabyte is
    /// headroom for other transports, while keeping a decryption's memory bounded in an extension process.
    public static let maximumBodyByteCount = 1 << 20

    /// The subscription's keys.
    public let keys: WebPushSubscriptionKeys

    /// A decryptor for the subscription that owns `keys`.
    public init(keys: WebPushSubscriptionKeys) { self.keys = keys }

    /// Decrypts `body` in `encoding`; `aesgcm` needs `legacy` (from the `Crypto-Key` and `Encryption` headers).
    ///
    /// - Throws: ``WebPushError`` (``WebPushError/missingParameter`` for `aesgcm` without `legacy`).
    public func decrypt(_ body: [UInt8], encoding: WebPushContentEncoding, legacy: WebPushLegacyParameters? = nil)
        throws(WebPushError) -> [UInt8]
    {
        switch encoding {
        case .aes128gcm:
            return try decryptAES128GCM(body)
        case .aesgcm:
            guard let legacy else {
                throw .with(.missingParameter, "aesgcm needs the Crypto-Key dh and Encryption salt headers")
            }
            return try decryptAESGCM(body, parameters: legacy)
        }
    }

    /// Decrypts a message as it arrived over HTTP: the encoding from `Content-Encoding`, and for `aesgcm` the
    /// sender key and salt from `Crypto-Key` and `Encryption` (header values; names are the caller's concern).
    ///
    /// - Throws: ``WebPushError/unsupportedEncoding`` for another or a missing `Content-Encoding`, else as
    ///   ``decrypt(_:encoding:legacy:)``.
    public func decrypt(_ body: [UInt8], contentEncoding: String?, cryptoKey: String?, encryption: String?)
        throws(WebPushError) -> [UInt8]
    {
        let encoding = try WebPushContentEncoding(headerValue: contentEncoding ?? "")
        switch encoding {
        case .aes128gcm:
            return try decryptAES128GCM(body)
        case .aesgcm:
            guard !body.isEmpty else { throw .with(.emptyBody, "the body is empty") }
            return try decryptAESGCM(
                body, parameters: WebPushLegacyParameters(cryptoKey: cryptoKey, encryption: encryption))
        }
    }

    /// Decrypts an `aes128gcm` message (RFC 8291): header `salt(16) ‖ rs(4) ‖ idlen(1) ‖ keyid`, where the key id
    /// is the sender's 65-byte public key, then records of `rs` bytes.
    ///
    /// - Throws: ``WebPushError/emptyBody``, ``WebPushError/truncatedHeader``, ``WebPushError/invalidRecordSize``,
    ///   ``WebPushError/invalidKeyID``, ``WebPushError/truncatedRecord``, ``WebPushError/authenticationFailure``,
    ///   ``WebPushError/badDelimiter``, ``WebPushError/tooLarge``.
    public func decryptAES128GCM(_ body: [UInt8]) throws(WebPushError) -> [UInt8] {
        let header = try AES128GCMHeader(body)
        guard header.keyID.count == 65 else {
            throw .with(
                .invalidKeyID, "key id must be the sender's 65-byte public key, got \(header.keyID.count) bytes")
        }
        let sender = Array(header.keyID)
        let secret = try WebPushKeyDerivation.sharedSecret(
            keys.privateKey, with: sender, refused: .invalidKeyID, what: "key id")
        let ikm = try WebPushKeyDerivation.webPushInputKeyingMaterial(
            sharedSecret: secret, authSecret: keys.authSecret, receiverPublicKey: keys.publicKey,
            senderPublicKey: sender)
        let content = try WebPushKeyDerivation.aes128gcm(inputKeyingMaterial: ikm, salt: header.salt)
        return try ECERecords.openAES128GCM(
            body[header.contentStart...], key: content.key, nonce: content.nonce, recordSize: header.recordSize)
    }

    /// Decrypts an `aesgcm` message (the draft Mastodon sends without `standard`): records of
    /// `recordSize + 16` bytes, each plaintext led by a two-byte padding length.
    ///
    /// - Throws: ``WebPushError/emptyBody``, ``WebPushError/invalidParameter`` (the sender key),
    ///   ``WebPushError/truncatedRecord``, ``WebPushError/authenticationFailure``, ``WebPushError/badPadding``,
    ///   ``WebPushError/tooLarge``.
    public func decryptAESGCM(_ body: [UInt8], parameters: WebPushLegacyParameters) throws(WebPushError) -> [UInt8] {
        guard !body.isEmpty else { throw .with(.emptyBody, "the body is empty") }
        guard body.count <= Self.maximumBodyByteCount else {
            throw .with(.tooLarge, "\(body.count) bytes; at most \(Self.maximumBodyByteCount)")
        }
        let secret = try WebPushKeyDerivation.sharedSecret(
            keys.privateKey, with: parameters.senderPublicKey, refused: .invalidParameter, what: "Crypto-Key dh")
        let content = try WebPushKeyDerivation.aesgcm(
            sharedSecret: secret, authSecret: keys.authSecret, salt: parameters.salt,
            receiverPublicKey: keys.publicKey, senderPublicKey: parameters.senderPublicKey)
        return try ECERecords.openAESGCM(
            body[...], key: content.key, nonce: content.nonce, recordSize: parameters.recordSize)
    }
}

/// The RFC 8188 §2.1 header of an `aes128gcm` body, read without trusting a length.
struct AES128GCMHeader {
    let salt: [UInt8]
    let recordSize: Int
    let keyID: ArraySlice<UInt8>
    /// Where the records start in the body.
    let contentStart: Int

    init(_ body: [UInt8]) throws(WebPushError) {
        guard !body.isEmpty else { throw .with(.emptyBody, "the body is empty") }
        guard body.count <= WebPushDecryptor.maximumBodyByteCount else {
            throw .with(.tooLarge, "\(body.count) bytes; at most \(WebPushDecryptor.maximumBodyByteCount)")
        }
        guard body.count >= 21 else {
            throw .with(.truncatedHeader, "\(body.count) bytes; the header alone takes 21 before the key id")
        }
        salt = Array(body[0..<16])
        recordSize = body[16..<20].reduce(0) { $0 << 8 | Int($1) }
        guard recordSize >= ECERecords.minimumAES128GCMRecordSize else {
            throw .with(.invalidRecordSize, "record size \(recordSize); at least 18")
        }
        let idLength = Int(body[20])
        guard body.count - 21 >= idLength else {
            throw .with(.truncatedHeader, "the key id of \(idLength) bytes runs past the body")
        }
        keyID = body[21..<(21 + idLength)]
        contentStart = 21 + idLength
    }
}
