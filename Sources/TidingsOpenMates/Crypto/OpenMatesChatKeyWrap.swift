import Foundation
import TidingsCore

/// Chat keys as the server stores them: each chat's AES key wrapped by the user's master key, as
/// `base64(12-byte IV ‖ ciphertext ‖ 16-byte tag)` (AES-256-GCM, no header).
///
/// For example:
/// ```swift
/// let chatKey = try OpenMatesChatKeyWrap.unwrap(chat.encryptedChatKey ?? "", masterKey: masterKey)
/// ```
public enum OpenMatesChatKeyWrap {
    /// Unwraps a chat key with the master key.
    ///
    /// - Returns: The chat key, only when the wrapped bytes authenticate under `masterKey` and hold a 128- or
    ///   256-bit key.
    /// - Throws: ``OpenMatesCryptoError/empty``, ``OpenMatesCryptoError/notBase64``,
    ///   ``OpenMatesCryptoError/tooShort``, ``OpenMatesCryptoError/authenticationFailed`` (wrong master key or
    ///   altered bytes), ``OpenMatesCryptoError/invalidChatKey``.
    public static func unwrap(_ wrapped: String, masterKey: TidingsCrypto.SymmetricKey) throws(OpenMatesCryptoError)
        -> TidingsCrypto.SymmetricKey
    {
        try unwrapKey(wrapped, with: masterKey, what: "wrapped chat key")
    }

    /// Opens base64(12-byte IV ‖ ciphertext ‖ tag) under `key` and reads the plaintext as an AES key: the one
    /// layout of every wrapped key (chat keys under the master key or a hidden chat's secret, embed keys under
    /// the master or the chat key). `what` names the value in error details.
    static func unwrapKey(_ wrapped: String, with key: TidingsCrypto.SymmetricKey, what: String)
        throws(OpenMatesCryptoError) -> TidingsCrypto.SymmetricKey
    {
        let plain = try openIVPrefixed(wrapped, with: key, what: what)
        do {
            return try TidingsCrypto.SymmetricKey(bytes: plain)
        } catch {
            throw OpenMatesCryptoError(.invalidChatKey, detail: "\(what): \(plain.count) bytes")
        }
    }

    /// Opens base64(12-byte IV ‖ ciphertext ‖ tag) under `key`, with no "OM" header.
    static func openIVPrefixed(_ text: String, with key: TidingsCrypto.SymmetricKey, what: String)
        throws(OpenMatesCryptoError) -> [UInt8]
    {
        guard !text.isEmpty else { throw OpenMatesCryptoError(.empty, detail: what) }
        guard let data = Data(base64Encoded: text) else {
            throw OpenMatesCryptoError(.notBase64, detail: "\(what) of \(text.utf8.count) characters")
        }
        let bytes = [UInt8](data)
        let minimum = OpenMatesContentBlob.legacyMinimum
        guard bytes.count >= minimum else {
            throw OpenMatesCryptoError(.tooShort, detail: "\(what) of \(bytes.count) bytes, at least \(minimum)")
        }
        let nonce = TidingsCrypto.AESGCM.nonceByteCount
        return try OpenMatesContentBlob.open(iv: Array(bytes[..<nonce]), sealed: Array(bytes[nonce...]), key: key)
    }

    /// Seals `plaintext` as base64(fresh random IV ‖ ciphertext ‖ tag) under `key`.
    static func sealIVPrefixed(_ plaintext: [UInt8], with key: TidingsCrypto.SymmetricKey) throws(CryptoError)
        -> String
    {
        Data(try TidingsCrypto.AESGCM.sealCombined(plaintext, key: key)).base64EncodedString()
    }

    /// Wraps `chatKey` with the master key under a fresh random IV, as the web client does.
    ///
    /// - Throws: `CryptoError` only when the crypto backend fails.
    public static func wrap(_ chatKey: TidingsCrypto.SymmetricKey, masterKey: TidingsCrypto.SymmetricKey)
        throws(CryptoError) -> String
    {
        Data(try TidingsCrypto.AESGCM.sealCombined(chatKey.bytes, key: masterKey)).base64EncodedString()
    }
}
