import Foundation
import TidingsCore

/// An `OpenMatesHiddenChatUnlock` opens hidden chats: their keys are wrapped not by the master key but by a
/// secret derived from the master key and the password the user hid them with.
///
/// The derivation is the public web client's (`glowingkitty/OpenMates`,
/// `frontend/packages/ui/src/services/hiddenChatService.ts` at 128d46f6fc0c8520ab3850b38d9d24681f5d91a6 and
/// `deriveKeyFromPassword` in `frontend/packages/ui/src/services/cryptoService.ts` at
/// 002c48af19c44f3d0a575c67d24ba410620d445b; read only, no code copied):
///
/// - secret = PBKDF2-HMAC-SHA256(password: UTF-8 of base64(master key bytes ‖ UTF-8 of the password),
///   salt: the first 16 bytes of the user's `user_email_salt`, 100,000 iterations, 32 bytes);
/// - a hidden chat's `encrypted_chat_key` is base64(12-byte IV ‖ AES-256-GCM(secret, chat key) ‖ tag).
///
/// The password is 4 to 30 characters (counted as JavaScript counts them, in UTF-16 code units); each chat
/// may be hidden with a different one, so an app may hold several unlocks. The secret lives only in this value
/// (`TidingsCrypto.SymmetricKey` redacts itself); nothing here is stored or logged.
///
/// For example:
/// ```swift
/// let unlock = try OpenMatesHiddenChatUnlock(masterKey: masterKey, password: typed, emailSalt: salt)
/// let decryptor = OpenMatesContentDecryptor(masterKey: masterKey, hiddenChatUnlocks: [unlock])
/// ```
public struct OpenMatesHiddenChatUnlock: Sendable {
    /// PBKDF2 rounds, as the web client uses them.
    public static let iterations = 100_000
    /// How many bytes of the email salt go into the derivation.
    public static let saltByteCount = 16
    /// The password lengths the web client accepts, in UTF-16 code units.
    public static let passwordLengths = 4...30

    /// The derived secret that wraps hidden chats' keys.
    public let secret: TidingsCrypto.SymmetricKey

    /// Wraps a secret the app derived before (kept, for example, for the length of an unlocked session).
    public init(secret: TidingsCrypto.SymmetricKey) {
        self.secret = secret
    }

    /// Derives the secret from the master key, the hide password and the user's email salt (its raw bytes, as
    /// the server gives them at login; only the first 16 are used). It takes 100,000 PBKDF2 rounds: call it off
    /// the main thread.
    ///
    /// - Throws: ``OpenMatesCryptoError/invalidUnlockSecret`` for a password outside 4…30 characters or an
    ///   empty salt.
    public init(masterKey: TidingsCrypto.SymmetricKey, password: String, emailSalt: [UInt8])
        throws(OpenMatesCryptoError)
    {
        let length = password.utf16.count
        guard Self.passwordLengths.contains(length) else {
            throw OpenMatesCryptoError(.invalidUnlockSecret, detail: "a password of \(length) characters, not 4…30")
        }
        guard !emailSalt.isEmpty else {
            throw OpenMatesCryptoError(.invalidUnlockSecret, detail: "no email salt")
        }
        let input = Array(Data(masterKey.bytes + Array(password.utf8)).base64EncodedString().utf8)
        do {
            let bytes = try TidingsCrypto.PBKDF2.deriveKey(
                password: input, salt: Array(emailSalt.prefix(Self.saltByteCount)), iterations: Self.iterations,
                outputByteCount: 32)
            secret = try TidingsCrypto.SymmetricKey(bytes: bytes)
        } catch {
            throw OpenMatesCryptoError(.invalidUnlockSecret, detail: "derivation failed: \(error.shortDescription)")
        }
    }

    /// Unwraps a hidden chat's key.
    ///
    /// - Throws: ``OpenMatesCryptoError/authenticationFailed`` when the key was wrapped by another secret (another
    ///   password, or a visible chat); the layout errors of ``OpenMatesChatKeyWrap/unwrap(_:masterKey:)``.
    public func unwrap(_ wrapped: String) throws(OpenMatesCryptoError) -> TidingsCrypto.SymmetricKey {
        try OpenMatesChatKeyWrap.unwrapKey(wrapped, with: secret, what: "hidden chat key")
    }

    /// Wraps a chat key under the secret with a fresh random IV, as hiding a chat does.
    public func wrap(_ chatKey: TidingsCrypto.SymmetricKey) throws(CryptoError) -> String {
        try OpenMatesChatKeyWrap.sealIVPrefixed(chatKey.bytes, with: secret)
    }
}
