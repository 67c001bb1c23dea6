import TidingsCore

/// One stored embed with its fields decrypted, or the reason each could not be.
public struct OpenMatesDecryptedEmbed: Sendable {
    /// The embed's ID.
    public var embedID: String
    /// The embed object as stored (fields still encrypted).
    public var raw: [String: JSONValue]
    /// `encrypted_content` in clear (TOON or JSON text), or why this embed (only this one) did not decrypt.
    public var content: Result<String, OpenMatesCryptoError>
    /// `encrypted_type` in clear (`code`, `website`, `app_skill_use`, …); nil when the embed has none.
    public var type: Result<String, OpenMatesCryptoError>?
    /// `encrypted_text_preview` in clear; nil when the embed has none.
    public var textPreview: Result<String, OpenMatesCryptoError>?
}

/// A stored chat read in clear: how its key opened, its title, draft, messages and embeds, each with its own
/// result.
public struct OpenMatesDecryptedChat: Sendable {
    /// The chat as stored.
    public var chat: OpenMatesChat
    /// How its key opened: visible, hidden and unlocked, hidden and locked, or unavailable.
    public var access: OpenMatesChatAccess
    /// The title in clear; nil when the chat has none.
    public var title: Result<String, OpenMatesCryptoError>?
    /// The draft in clear; nil when the chat has none.
    public var draft: Result<String, OpenMatesCryptoError>?
    /// Every stored message (oldest first) with its content.
    public var messages: [OpenMatesDecryptedMessage]
    /// Every stored embed of the chat (by embed ID) with its fields.
    public var embeds: [OpenMatesDecryptedEmbed]
}

extension OpenMatesContentDecryptor {
    /// Decrypts `embeds` of `chat` with the keys in `entries` (see ``OpenMatesEmbedCrypto/embedKey(embedID:chatID:entries:masterKey:chatKey:parentOf:)``
    /// for the order keys are tried in). A chat whose own key is locked still opens embeds that have a
    /// `master` entry. One embed that does not decrypt carries its error; the others decrypt.
    public func decrypt(
        embeds: [[String: JSONValue]], of chat: OpenMatesChat, entries: [OpenMatesEmbedKeyEntry]
    ) -> [OpenMatesDecryptedEmbed] {
        let chatKey = try? chatKey(for: chat)
        var parents: [String: String] = [:]
        for embed in embeds {
            if let id = embed["embed_id"]?.stringValue, let parent = embed["parent_embed_id"]?.stringValue {
                parents[id] = parent
            }
        }
        return embeds.compactMap { embed -> OpenMatesDecryptedEmbed? in
            guard let id = embed["embed_id"]?.stringValue else { return nil }
            let key = Result { () throws(OpenMatesCryptoError) -> TidingsCrypto.SymmetricKey in
                try OpenMatesEmbedCrypto.embedKey(
                    embedID: id, chatID: chat.chatID, entries: entries, masterKey: masterKey,
                    chatKey: chatKey, parentOf: { parents[$0] })
            }
            func field(_ name: String) -> Result<String, OpenMatesCryptoError>? {
                guard let value = embed[name] else { return nil }
                return key.flatMap { key in
                    Result { () throws(OpenMatesCryptoError) -> String in
                        guard let text = value.stringValue else {
                            throw OpenMatesCryptoError(.notBase64, detail: "\(name) is not a string")
                        }
                        return try OpenMatesEmbedCrypto.openText(text, embedKey: key)
                    }
                }
            }
            return OpenMatesDecryptedEmbed(
                embedID: id, raw: embed,
                content: field("encrypted_content")
                    ?? .failure(OpenMatesCryptoError(.empty, detail: "no encrypted_content")),
                type: field("encrypted_type"), textPreview: field("encrypted_text_preview"))
        }
    }
}

extension OpenMatesStore {
    /// A stored chat in clear: its access state, title, draft, messages (oldest first) and embeds, each value
    /// with its own result; nil when the chat is not stored. Nothing decrypted is cached or written.
    ///
    /// - Throws: `StoreError` when the store cannot be read; never a decryption error.
    public func decryptedChat(chatID: String, decryptor: OpenMatesContentDecryptor) throws -> OpenMatesDecryptedChat? {
        guard let chat = try chat(chatID)?.chat else { return nil }
        let messages = try messages(chatID: chatID)
        let (embeds, entries) = try embedsAndKeys(chatID: chatID)
        return OpenMatesDecryptedChat(
            chat: chat, access: decryptor.access(to: chat), title: decryptor.title(of: chat),
            draft: decryptor.draft(of: chat), messages: decryptor.decrypt(messages, of: chat),
            embeds: decryptor.decrypt(embeds: embeds, of: chat, entries: entries))
    }

    /// The chat's stored embeds (by embed ID) and every key entry that may open them: the chat's own entries and
    /// the entries (master ones have no chat) naming those embeds or their parents.
    func embedsAndKeys(chatID: String) throws -> ([[String: JSONValue]], [OpenMatesEmbedKeyEntry]) {
        try database.read { db in
            let hash = Self.hashedChatID(chatID)
            let embeds = try db.fetchAll(
                "SELECT embed_id, body FROM om_embeds WHERE hashed_chat_id = ? ORDER BY embed_id", [hash]
            ) { row -> String? in
                let id: String = try row[0]
                return try sealing.open(try row[1], "om_embeds", "body", rowID: id)
            }.compactMap { $0.flatMap { try? JSONValue(parsing: $0) }?.objectValue }
            var hashes: Set<String> = []
            for embed in embeds {
                for name in ["embed_id", "parent_embed_id"] {
                    if let id = embed[name]?.stringValue { hashes.insert(OpenMatesEmbedCrypto.hashedEmbedID(id)) }
                }
            }
            let keys = try db.fetchAll(
                """
                SELECT key_id, body FROM om_embed_keys
                WHERE hashed_chat_id = ? OR hashed_embed_id IN (SELECT value FROM json_each(?)) ORDER BY key_id
                """, [hash, JSONValue.array(hashes.sorted().map(JSONValue.string)).jsonString()]
            ) { row -> String? in
                let id: String = try row[0]
                return try sealing.open(try row[1], "om_embed_keys", "body", rowID: id)
            }.compactMap { $0.flatMap { try? JSONValue(parsing: $0) }?.objectValue }.compactMap(
                OpenMatesEmbedKeyEntry.init)
            return (embeds, keys)
        }
    }
}
