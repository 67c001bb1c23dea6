import Foundation
import TidingsCore

/// AES-256-GCM with one key per conversation: `encrypted_payload` = nonce (12) ‖ ciphertext ‖ tag (16),
/// with the conversation ID as associated data so a blob cannot be replayed into another conversation.
///
/// The sandbox server seals with it; the client opens with it. Thread-safe.
public struct KecalekAESGCMCipher: KecalekMessageDecryptor {
    private let keyForConversation: @Sendable (String) -> TidingsCrypto.SymmetricKey?

    /// A cipher over a fixed set of conversation keys.
    public init(keys: [String: TidingsCrypto.SymmetricKey]) {
        self.keyForConversation = { keys[$0] }
    }

    /// A cipher that asks `keyForConversation` for each conversation's key (keys may arrive later).
    public init(keyForConversation: @escaping @Sendable (String) -> TidingsCrypto.SymmetricKey?) {
        self.keyForConversation = keyForConversation
    }

    /// Decrypts one payload.
    ///
    /// - Throws: ``KecalekError/missingKey`` without a key for the conversation;
    ///   ``KecalekError/decryption`` when the blob is short, altered or sealed under another key.
    public func decrypt(_ sealed: Data, conversationID: String, messageID: String) throws -> Data {
        guard let key = keyForConversation(conversationID) else {
            throw KecalekError(.missingKey, operation: messageID, detail: "no key for conversation")
        }
        do {
            return Data(
                try TidingsCrypto.AESGCM.openCombined(
                    Array(sealed), key: key, authenticating: Array(conversationID.utf8)))
        } catch {
            throw KecalekError(.decryption, operation: messageID, detail: "\(error)")
        }
    }

    /// Seals a plaintext payload for `conversationID` under a fresh random nonce.
    ///
    /// - Throws: ``KecalekError/missingKey`` without a key; ``KecalekError/decryption`` if the cipher fails.
    public func seal(_ plaintext: Data, conversationID: String) throws -> Data {
        guard let key = keyForConversation(conversationID) else {
            throw KecalekError(.missingKey, operation: conversationID, detail: "no key for conversation")
        }
        do {
            return Data(
                try TidingsCrypto.AESGCM.sealCombined(
                    Array(plaintext), key: key, authenticating: Array(conversationID.utf8)))
        } catch {
            throw KecalekError(.decryption, operation: conversationID, detail: "\(error)")
        }
    }
}
