import Foundation

/// What an `aesgcm` message carries outside its body: the sender's public key (`Crypto-Key: dh=…`), the salt
/// (`Encryption: salt=…`) and the record size (`Encryption: rs=…`, 4096 when absent).
public struct WebPushLegacyParameters: Sendable, Equatable {
    /// The record size the draft assumes when `Encryption` names none.
    public static let defaultRecordSize = 4096

    /// The sender's 65-byte uncompressed P-256 public key.
    public let senderPublicKey: [UInt8]
    /// The 16-byte salt.
    public let salt: [UInt8]
    /// The plaintext bytes per record (at least 3).
    public let recordSize: Int

    /// Parameters from their values.
    ///
    /// - Throws: ``WebPushError/invalidParameter`` for a salt that is not 16 bytes,
    ///   ``WebPushError/invalidRecordSize`` for a record size below 3 or above `UInt32.max`.
    public init(senderPublicKey: [UInt8], salt: [UInt8], recordSize: Int = defaultRecordSize) throws(WebPushError) {
        guard salt.count == 16 else { throw .with(.invalidParameter, "salt must be 16 bytes, got \(salt.count)") }
        guard recordSize >= ECERecords.minimumAESGCMRecordSize, recordSize <= Int(UInt32.max) else {
            throw .with(.invalidRecordSize, "aesgcm record size must be 3 to \(UInt32.max)")
        }
        self.senderPublicKey = senderPublicKey
        self.salt = salt
        self.recordSize = recordSize
    }

    /// Parameters from the `Crypto-Key` and `Encryption` header values.
    ///
    /// Both are lists of `name=value` parameters separated by `;` or `,` (servers use both; pywebpush appends
    /// `dh` to a `p256ecdsa` with `;`); values may be quoted. Other parameters (`p256ecdsa`, `keyid`) are
    /// ignored.
    ///
    /// - Throws: ``WebPushError/missingParameter`` when `dh` or `salt` is absent, ``WebPushError/invalidParameter``
    ///   when a value is not base64url, the salt is not 16 bytes, or two different `dh` values are given;
    ///   ``WebPushError/invalidRecordSize`` for an `rs` that is not a number from 3 to `UInt32.max`.
    public init(cryptoKey: String?, encryption: String?) throws(WebPushError) {
        let keyParameters = Self.parameters(cryptoKey ?? "")
        let encryptionParameters = Self.parameters(encryption ?? "")
        let dhValues = Set(keyParameters.filter { $0.name == "dh" }.map(\.value))
        guard let dh = dhValues.first else {
            throw .with(.missingParameter, "Crypto-Key has no dh (the sender's public key)")
        }
        guard dhValues.count == 1 else { throw .with(.invalidParameter, "Crypto-Key has more than one dh") }
        guard let salt = encryptionParameters.first(where: { $0.name == "salt" })?.value else {
            throw .with(.missingParameter, "Encryption has no salt")
        }
        var recordSize = Self.defaultRecordSize
        if let text = encryptionParameters.first(where: { $0.name == "rs" })?.value {
            // At most 10 digits: no conversion can overflow, and the range check below bounds the value.
            guard !text.isEmpty, text.utf8.count <= 10, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                let value = Int(text)
            else {
                throw .with(.invalidRecordSize, "Encryption rs is not a number")
            }
            recordSize = value
        }
        try self.init(
            senderPublicKey: WebPushBase64URL.decode(dh, what: "Crypto-Key dh"),
            salt: WebPushBase64URL.decode(salt, what: "Encryption salt"), recordSize: recordSize)
    }

    private static func parameters(_ header: String) -> [(name: String, value: String)] {
        header.split(whereSeparator: { $0 == ";" || $0 == "," }).compactMap { item in
            let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard pair.count == 2 else { return nil }
            let name = pair[0].trimmingCharacters(in: .whitespaces).lowercased()
            var value = pair[1].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast())
            }
            return (name, value)
        }
    }

    /// The `Crypto-Key` value a server sends with these parameters (`dh=<base64url>`).
    public var cryptoKeyHeader: String { "dh=\(WebPushBase64URL.encode(senderPublicKey))" }
    /// The `Encryption` value a server sends with these parameters (`salt=<base64url>`, plus `rs` when not 4096).
    public var encryptionHeader: String {
        let salt = "salt=\(WebPushBase64URL.encode(salt))"
        return recordSize == Self.defaultRecordSize ? salt : "\(salt);rs=\(recordSize)"
    }
}
