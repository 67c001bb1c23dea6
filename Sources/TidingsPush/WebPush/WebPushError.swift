import TidingsCore

/// A `WebPushError` says why a Web Push message, its headers or a subscription key was refused.
///
/// It follows `TidingsError`: compare or catch by kind (`catch WebPushError.badPadding`), read the
/// context from ``detail`` and ``recordIndex``. Neither it nor its `description` ever holds key bytes, the
/// auth secret or any plaintext: a refused message is reported by what was wrong with it, never by its content.
public struct WebPushError: TidingsError {
    enum Code: String, Sendable {
        case emptyBody, truncatedHeader, invalidRecordSize, invalidKeyID, truncatedRecord, badDelimiter, badPadding
        case authenticationFailure, missingParameter, invalidParameter, invalidKey, unsupportedEncoding
        case tooLarge, platformFailure
    }

    let code: Code
    /// Which part of the input was refused and why (never its bytes).
    public let detail: String?
    /// The zero-based record the failure was found in, for record-level kinds.
    public let recordIndex: Int?

    init(_ code: Code, detail: String? = nil, recordIndex: Int? = nil) {
        self.code = code
        self.detail = detail
        self.recordIndex = recordIndex
    }

    /// The kind of failure (compare with the static members, e.g. `error == .badDelimiter`).
    public var kind: TidingsErrorKind { TidingsErrorKind(code) }

    /// The body was empty: there is no header and no record to decrypt.
    public static let emptyBody = WebPushError(.emptyBody)
    /// The body ended inside the `aes128gcm` header (salt, record size, key id length or key id).
    public static let truncatedHeader = WebPushError(.truncatedHeader)
    /// The record size is below the smallest valid one (18 for `aes128gcm`, 3 for `aesgcm`) or not a number.
    public static let invalidRecordSize = WebPushError(.invalidRecordSize)
    /// The `aes128gcm` key id is not the sender's uncompressed P-256 public key (65 bytes on the curve).
    public static let invalidKeyID = WebPushError(.invalidKeyID)
    /// A record is too short to hold its tag and padding, or the message ends without its final record.
    public static let truncatedRecord = WebPushError(.truncatedRecord)
    /// An `aes128gcm` record's delimiter is wrong: 0x01 on the last record, 0x02 before it, another value, or
    /// none (a record of zeros).
    public static let badDelimiter = WebPushError(.badDelimiter)
    /// An `aesgcm` record's padding length runs past the record or its padding is not all zeros.
    public static let badPadding = WebPushError(.badPadding)
    /// A record's tag does not verify: the message was altered, or it was encrypted for other keys.
    public static let authenticationFailure = WebPushError(.authenticationFailure)
    /// An `aesgcm` message lacks its sender key (`Crypto-Key: dh=`) or its salt (`Encryption: salt=`).
    public static let missingParameter = WebPushError(.missingParameter)
    /// A header parameter or an encoded value is malformed (bad base64url, a salt that is not 16 bytes).
    public static let invalidParameter = WebPushError(.invalidParameter)
    /// Subscription key material was refused: a private key that is not a P-256 scalar, an auth secret that
    /// is not 16 bytes, a public key not on the curve.
    public static let invalidKey = WebPushError(.invalidKey)
    /// The `Content-Encoding` is neither `aes128gcm` nor `aesgcm`.
    public static let unsupportedEncoding = WebPushError(.unsupportedEncoding)
    /// The input is larger than this decoder accepts (see ``WebPushDecryptor/maximumBodyByteCount``).
    public static let tooLarge = WebPushError(.tooLarge)
    /// The platform's crypto library failed for a reason outside the input (``detail`` names the call).
    public static let platformFailure = WebPushError(.platformFailure)

    static func with(_ code: Code, _ detail: String, record: Int? = nil) -> WebPushError {
        WebPushError(code, detail: detail, recordIndex: record)
    }

    /// The kind with its record and reason, e.g. `WebPushError.badDelimiter(record 0: last record delimiter 0x01)`.
    public var description: String {
        var parts: [String] = []
        if let recordIndex { parts.append("record \(recordIndex)") }
        if let detail { parts.append(detail) }
        return parts.isEmpty ? shortDescription : "\(shortDescription)(\(parts.joined(separator: ": ")))"
    }
}
