import Foundation
import TidingsCore

/// An `OpenMatesContentBlob` is one encrypted OpenMates value (a message's content, a title, a draft) as the
/// server stores it: base64 of AES-256-GCM output under the chat's key.
///
/// Two forms exist (seed README, OpenMates section):
/// - current: `"OM" ‖ 4-byte key fingerprint ‖ 12-byte IV ‖ ciphertext ‖ 16-byte tag`
///   (``OpenMatesKeyFingerprint``);
/// - legacy: `12-byte IV ‖ ciphertext ‖ 16-byte tag`.
///
/// Parsing checks only the shape; ``open(with:)`` checks the fingerprint, then the tag, and returns bytes only
/// when they authenticate. Every malformed input is an ``OpenMatesCryptoError``, never a trap.
///
/// For example:
/// ```swift
/// let blob = try OpenMatesContentBlob(base64: message.raw["encrypted_content"]?.stringValue ?? "")
/// let text = try blob.openText(with: chatKey)
/// ```
public struct OpenMatesContentBlob: Sendable, Hashable {
    /// Which of the two layouts the bytes have.
    public enum Form: Sendable, Hashable {
        /// `"OM"` header with the fingerprint of the key it was sealed with.
        case fingerprinted(fingerprint: [UInt8])
        /// No header (written before the fingerprint existed).
        case legacy
    }

    /// The layout.
    public let form: Form
    /// The 12-byte GCM nonce.
    public let iv: [UInt8]
    /// Ciphertext followed by the 16-byte tag.
    public let sealed: [UInt8]
    /// Every decoded byte: an "OM" header may be the start of a legacy IV, see ``open(with:)``.
    let bytes: [UInt8]

    /// The two header bytes of the current form, `"OM"`.
    public static let magic: [UInt8] = [0x4F, 0x4D]
    static let headerByteCount = magic.count + OpenMatesKeyFingerprint.byteCount
    static let legacyMinimum = TidingsCrypto.AESGCM.nonceByteCount + TidingsCrypto.AESGCM.tagByteCount
    static let fingerprintedMinimum = headerByteCount + legacyMinimum

    /// Decodes base64 text and parses it; see ``init(bytes:)``.
    ///
    /// - Throws: ``OpenMatesCryptoError/empty``, ``OpenMatesCryptoError/notBase64``,
    ///   ``OpenMatesCryptoError/tooShort``.
    public init(base64 text: String) throws(OpenMatesCryptoError) {
        guard !text.isEmpty else { throw .empty }
        guard let data = Data(base64Encoded: text) else {
            throw OpenMatesCryptoError(.notBase64, detail: "\(text.utf8.count) characters")
        }
        try self.init(bytes: [UInt8](data))
    }

    /// Parses decoded bytes: the current form when they start with `"OM"` and are long enough for its header,
    /// otherwise the legacy form.
    ///
    /// - Throws: ``OpenMatesCryptoError/empty``, or ``OpenMatesCryptoError/tooShort`` below 28 bytes (IV and
    ///   tag).
    public init(bytes: [UInt8]) throws(OpenMatesCryptoError) {
        guard !bytes.isEmpty else { throw .empty }
        let nonce = TidingsCrypto.AESGCM.nonceByteCount
        if bytes.count >= Self.fingerprintedMinimum, bytes.starts(with: Self.magic) {
            form = .fingerprinted(fingerprint: Array(bytes[Self.magic.count..<Self.headerByteCount]))
            iv = Array(bytes[Self.headerByteCount..<(Self.headerByteCount + nonce)])
            sealed = Array(bytes[(Self.headerByteCount + nonce)...])
        } else {
            guard bytes.count >= Self.legacyMinimum else {
                throw OpenMatesCryptoError(
                    .tooShort, detail: "\(bytes.count) bytes, at least \(Self.legacyMinimum)")
            }
            form = .legacy
            iv = Array(bytes[..<nonce])
            sealed = Array(bytes[nonce...])
        }
        self.bytes = bytes
    }

    /// Checks the fingerprint (current form) and the tag, and decrypts.
    ///
    /// A legacy blob whose random IV happens to start with `"OM"` (1 in 65,536) parses as the current form; when
    /// its "fingerprint" does not match, the bytes are tried once more as a legacy blob, and only if that fails
    /// too is the fingerprint reported.
    ///
    /// - Returns: The plaintext, only when it authenticates under `key`.
    /// - Throws: ``OpenMatesCryptoError/fingerprintMismatch`` when the blob names another key;
    ///   ``OpenMatesCryptoError/authenticationFailed`` when the tag does not match.
    public func open(with key: TidingsCrypto.SymmetricKey) throws(OpenMatesCryptoError) -> [UInt8] {
        switch form {
        case .legacy:
            return try Self.open(iv: iv, sealed: sealed, key: key)
        case .fingerprinted(let fingerprint):
            if fingerprint == OpenMatesKeyFingerprint.of(key.bytes) {
                return try Self.open(iv: iv, sealed: sealed, key: key)
            }
            let nonce = TidingsCrypto.AESGCM.nonceByteCount
            if let plain = try? Self.open(iv: Array(bytes[..<nonce]), sealed: Array(bytes[nonce...]), key: key) {
                return plain
            }
            throw .fingerprintMismatch
        }
    }

    /// Decrypts like ``open(with:)`` and reads the plaintext as UTF-8.
    ///
    /// - Throws: what ``open(with:)`` throws, or ``OpenMatesCryptoError/notText`` for invalid UTF-8.
    public func openText(with key: TidingsCrypto.SymmetricKey) throws(OpenMatesCryptoError) -> String {
        let plain = try open(with: key)
        guard let text = OpenMatesUTF8.text(plain) else {
            throw OpenMatesCryptoError(.notText, detail: "\(plain.count) bytes")
        }
        return text
    }

    /// Seals `plaintext` under `key` in the current form (`"OM"`, fingerprint, fresh random IV) and returns the
    /// base64 text, as the web client writes it.
    ///
    /// - Throws: `CryptoError` when the crypto backend refuses the input (beyond 2 GiB).
    public static func seal(_ plaintext: [UInt8], key: TidingsCrypto.SymmetricKey) throws(CryptoError) -> String {
        let box = try TidingsCrypto.AESGCM.sealCombined(plaintext, key: key)
        return Data(magic + OpenMatesKeyFingerprint.of(key.bytes) + box).base64EncodedString()
    }

    /// Seals UTF-8 text; see ``seal(_:key:)``.
    public static func seal(_ text: String, key: TidingsCrypto.SymmetricKey) throws(CryptoError) -> String {
        try seal(Array(text.utf8), key: key)
    }

    /// Seals `plaintext` in the legacy form (IV, ciphertext, tag; no header), which older clients wrote.
    public static func sealLegacy(_ plaintext: [UInt8], key: TidingsCrypto.SymmetricKey) throws(CryptoError)
        -> String
    {
        Data(try TidingsCrypto.AESGCM.sealCombined(plaintext, key: key)).base64EncodedString()
    }

    static func open(iv: [UInt8], sealed: [UInt8], key: TidingsCrypto.SymmetricKey) throws(OpenMatesCryptoError)
        -> [UInt8]
    {
        let tagStart = sealed.count - TidingsCrypto.AESGCM.tagByteCount
        do {
            return try TidingsCrypto.AESGCM.open(
                Array(sealed[..<tagStart]), tag: Array(sealed[tagStart...]), key: key, nonce: iv)
        } catch {
            throw OpenMatesCryptoError(.authenticationFailed, detail: error.shortDescription)
        }
    }
}
