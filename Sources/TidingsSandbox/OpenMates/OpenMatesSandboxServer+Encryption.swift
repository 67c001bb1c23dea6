import Foundation
import TidingsCore
import TidingsOpenMates

/// The sandbox's content encryption, in the web client's formats (seed README, OpenMates section): each chat
/// key wrapped by the master key as base64(IV ‖ ciphertext ‖ tag), content as "OM" blobs under the chat key.
///
/// Unlike a real client, everything is deterministic: a chat's key is HKDF-SHA256 of the master key with the
/// chat ID, and each IV is an HMAC of what it seals under that key, so equal servers send equal bytes. An IV
/// repeats only for the same plaintext under the same key, which reveals nothing AES-GCM's security needs
/// hidden; this shortcut is for the sandbox only.
extension OpenMatesSandboxServer {
    /// The plaintext title of a seeded chat.
    public nonisolated static func seededTitle(chatID: String) -> String { "Chat \(chatID)" }

    /// The plaintext of a seeded chat's message `index`.
    public nonisolated static func seededMessage(chatID: String, index: Int) -> String {
        "Message \(index) of \(chatID)"
    }

    /// `plaintext` sealed under the chat's key as an "OM" blob (base64).
    func seal(_ plaintext: String, chatID: String) -> String {
        let key = chatKey(chatID)
        let sealed = Self.sealDeterministically(Array(plaintext.utf8), key: key)
        return Data(OpenMatesContentBlob.magic + OpenMatesKeyFingerprint.of(key.bytes) + sealed).base64EncodedString()
    }

    /// The chat's key wrapped by ``masterKey`` (base64, no header).
    func wrappedChatKey(_ chatID: String) -> String {
        Data(Self.sealDeterministically(chatKey(chatID).bytes, key: masterKey)).base64EncodedString()
    }

    /// The chat's key: derived from the master key and the chat ID, remembered in ``chatKeys``.
    func chatKey(_ chatID: String) -> TidingsCrypto.SymmetricKey {
        if let key = chatKeys[chatID] { return key }
        let derived =
            (try? TidingsCrypto.HKDF.deriveKey(
                inputKeyMaterial: masterKey.bytes, info: Array("openmates sandbox chat key \(chatID)".utf8),
                outputByteCount: 32)) ?? TidingsCrypto.SHA256.hash(masterKey.bytes + Array(chatID.utf8))
        // 32 bytes always make a valid AES-256 key.
        let key = (try? TidingsCrypto.SymmetricKey(bytes: derived)) ?? masterKey
        chatKeys[chatID] = key
        return key
    }

    /// IV ‖ ciphertext ‖ tag, the IV an HMAC of the plaintext under the key.
    static func sealDeterministically(_ plaintext: [UInt8], key: TidingsCrypto.SymmetricKey) -> [UInt8] {
        let nonce = Array(
            TidingsCrypto.HMACSHA256.authenticationCode(for: plaintext, key: key.bytes)
                .prefix(TidingsCrypto.AESGCM.nonceByteCount))
        // Refused only for a wrong nonce size or inputs beyond 2 GiB, neither of which the sandbox makes.
        guard let box = try? TidingsCrypto.AESGCM.seal(plaintext, key: key, nonce: nonce) else { return [] }
        return nonce + box.ciphertext + box.tag
    }
}
