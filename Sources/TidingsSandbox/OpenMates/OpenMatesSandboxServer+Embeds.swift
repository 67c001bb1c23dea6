import Foundation
import TidingsCore
import TidingsOpenMates

/// The sandbox's embeds, encrypted as the web client encrypts them (`OpenMatesEmbedCrypto`): each seeded chat
/// with messages has one code embed whose key is derived from the chat key (HKDF, salt
/// `openmates-embed-key-v1`, info the embed ID) and sent as one `chat` entry of `embed_keys` wrapped by the
/// chat key; its `encrypted_type`, `encrypted_content` and `encrypted_text_preview` are sealed under the embed
/// key (IV ‖ ciphertext ‖ tag, no header). IVs are deterministic, like the rest of the sandbox's encryption.
///
/// The real server also sends a `master` entry per embed (wrapped by the master key, no chat); the sandbox
/// leaves it out so a chat's embed keys stay the chat's (the client reads both kinds).
extension OpenMatesSandboxServer {
    /// The embed ID of a seeded chat's embed.
    public nonisolated static func seededEmbedID(chatID: String) -> String { "embed-\(chatID)" }

    /// The plaintext `encrypted_content` of a seeded chat's embed (JSON text).
    public nonisolated static func seededEmbedContent(chatID: String) -> String {
        "{\"type\":\"code\",\"language\":\"swift\",\"code\":\"print(\\\"embed of \(chatID)\\\")\"}"
    }

    /// The plaintext `encrypted_type` of a seeded embed.
    public nonisolated static let seededEmbedType = "code"

    /// The plaintext `encrypted_text_preview` of a seeded chat's embed.
    public nonisolated static func seededEmbedPreview(chatID: String) -> String { "preview of \(chatID)" }

    /// The embed object and its key entry for a seeded chat.
    func seededEmbed(chatID: String) -> (embeds: [[String: JSONValue]], keys: [[String: JSONValue]]) {
        let embedID = Self.seededEmbedID(chatID: chatID)
        let chatKey = chatKey(chatID)
        let embedKey = OpenMatesEmbedCrypto.derivedEmbedKey(chatKey: chatKey, embedID: embedID)
        func sealed(_ text: String) -> JSONValue {
            .string(Data(Self.sealDeterministically(Array(text.utf8), key: embedKey)).base64EncodedString())
        }
        let hashedChat = OpenMatesStore.hashedChatID(chatID)
        let embed: [String: JSONValue] = [
            "embed_id": .string(embedID), "hashed_chat_id": .string(hashedChat), "status": "finished",
            "encrypted_type": sealed(Self.seededEmbedType),
            "encrypted_content": sealed(Self.seededEmbedContent(chatID: chatID)),
            "encrypted_text_preview": sealed(Self.seededEmbedPreview(chatID: chatID)),
        ]
        let entry = OpenMatesEmbedKeyEntry(
            hashedEmbedID: OpenMatesEmbedCrypto.hashedEmbedID(embedID), keyType: .chat, hashedChatID: hashedChat,
            encryptedEmbedKey: Data(Self.sealDeterministically(embedKey.bytes, key: chatKey)).base64EncodedString())
        var key = entry.object
        key["id"] = .string("key-\(chatID)")
        return ([embed], [key])
    }
}
