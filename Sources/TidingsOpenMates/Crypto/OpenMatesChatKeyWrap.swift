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
        guard !wrapped.isEmpty else { throw .empty }
        guard let data = Data(base64Encoded: wrapped) else {
            throw OpenMatesCryptoError(.notBase64, detail: "wrapped chat key of \(wrapped.utf8.count) characters")
        }
        let bytes = [UInt8](data)
        let minimum = OpenMatesContentBlob.legacyMinimum
        guard bytes.count >= minimum else {
            throw OpenMatesCryptoError(
                .tooShort, detail: "wrapped chat key of \(bytes.count) bytes, at least \(minimum)")
        }
        let nonce = TidingsCrypto.AESGCM.nonceByteCount
        let plain = try OpenMatesContentBlob.open(
            iv: Array(bytes[..<nonce]), sealed: Array(bytes[nonce...]), key: masterKey)
        do {
            return try TidingsCrypto.SymmetricKey(bytes: plain)
        } catch {
            throw OpenMatesCryptoError(.invalidChatKey, detail: "\(plain.count) bytes")
        }
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
