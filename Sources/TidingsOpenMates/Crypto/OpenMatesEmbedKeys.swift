import TidingsCore

/// One stored `embed_keys` entry: an embed's AES key wrapped by another key, as the server sends it.
///
/// An embed has several entries (public source, `backend/core/directus/schemas/embed_keys.yml`): one with
/// `key_type` `master` (wrapped by the user's master key, no chat) and one `chat` entry per chat it appears
/// in (wrapped by that chat's key, `hashed_chat_id` naming the chat). Entries name the embed by
/// `hashed_embed_id`, the lower-case hex SHA-256 of its ID. Every wrapped key is base64(12-byte IV ‖
/// ciphertext ‖ tag), AES-256-GCM, without the "OM" header.
public struct OpenMatesEmbedKeyEntry: Sendable, Hashable {
    /// Which key wraps the embed key.
    public enum KeyType: Sendable, Hashable {
        /// The user's master key.
        case master
        /// The key of the chat named by ``OpenMatesEmbedKeyEntry/hashedChatID``.
        case chat
        /// A type this client does not use (`project`, or one added later): never tried.
        case other(String)
    }

    /// The SHA-256 (lower-case hex) of the embed's ID.
    public var hashedEmbedID: String
    /// Which key wraps it.
    public var keyType: KeyType
    /// For ``KeyType/chat``: the SHA-256 (lower-case hex) of the chat's ID.
    public var hashedChatID: String?
    /// The wrapped embed key (base64).
    public var encryptedEmbedKey: String

    /// Creates an entry.
    public init(hashedEmbedID: String, keyType: KeyType, hashedChatID: String? = nil, encryptedEmbedKey: String) {
        self.hashedEmbedID = hashedEmbedID
        self.keyType = keyType
        self.hashedChatID = hashedChatID
        self.encryptedEmbedKey = encryptedEmbedKey
    }

    /// Reads an entry from the object the server sent; nil when it lacks `hashed_embed_id`, `key_type` or
    /// `encrypted_embed_key`.
    public init?(_ object: [String: JSONValue]) {
        guard let hashed = object["hashed_embed_id"]?.stringValue, let type = object["key_type"]?.stringValue,
            let wrapped = object["encrypted_embed_key"]?.stringValue
        else { return nil }
        let keyType: KeyType =
            switch type {
            case "master": .master
            case "chat": .chat
            default: .other(type)
            }
        self.init(
            hashedEmbedID: hashed, keyType: keyType, hashedChatID: object["hashed_chat_id"]?.stringValue,
            encryptedEmbedKey: wrapped)
    }

    /// The object form the server sends.
    public var object: [String: JSONValue] {
        var object: [String: JSONValue] = [
            "hashed_embed_id": .string(hashedEmbedID), "encrypted_embed_key": .string(encryptedEmbedKey),
        ]
        switch keyType {
        case .master: object["key_type"] = "master"
        case .chat: object["key_type"] = "chat"
        case .other(let name): object["key_type"] = .string(name)
        }
        if let hashedChatID { object["hashed_chat_id"] = .string(hashedChatID) }
        return object
    }
}

/// Embed keys and embed content in the public web client's formats (`glowingkitty/OpenMates`,
/// `frontend/packages/ui/src/services/encryption/MetadataEncryptor.ts`, commit
/// e1cf380bee25a74d7cc092710d040e20dbf4bb7d; read only, no code copied):
///
/// - an embed key is a 256-bit AES key; new ones are derived from the chat key with HKDF-SHA256 (salt
///   `openmates-embed-key-v1`, info the embed ID), older ones are random — a reader only unwraps;
/// - wrapped keys and embed fields (`encrypted_content`, `encrypted_type`, `encrypted_text_preview`) are
///   base64(12-byte IV ‖ ciphertext ‖ tag) under the wrapping key or the embed key, with no "OM" header.
public enum OpenMatesEmbedCrypto {
    /// The lower-case hex SHA-256 of an embed ID: how `embed_keys` entries name their embed.
    public static func hashedEmbedID(_ embedID: String) -> String {
        TidingsCrypto.SHA256.hash(Array(embedID.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// The embed key the web client derives for `embedID` from the chat key (HKDF-SHA256, salt
    /// `openmates-embed-key-v1`, info the embed ID's UTF-8, 32 bytes).
    public static func derivedEmbedKey(chatKey: TidingsCrypto.SymmetricKey, embedID: String)
        -> TidingsCrypto.SymmetricKey
    {
        // 32 bytes of HKDF output are always within RFC 5869's limit and always a valid AES-256 key.
        let bytes =
            (try? TidingsCrypto.HKDF.deriveKey(
                inputKeyMaterial: chatKey.bytes, salt: Array("openmates-embed-key-v1".utf8),
                info: Array(embedID.utf8), outputByteCount: 32)) ?? []
        return (try? TidingsCrypto.SymmetricKey(bytes: bytes)) ?? chatKey
    }

    /// Unwraps an embed key with the key that wrapped it (the master key or the chat key).
    ///
    /// - Throws: ``OpenMatesCryptoError/empty``, ``OpenMatesCryptoError/notBase64``,
    ///   ``OpenMatesCryptoError/tooShort``, ``OpenMatesCryptoError/authenticationFailed`` (another key, or
    ///   altered), ``OpenMatesCryptoError/invalidChatKey`` (not a 128- or 256-bit key).
    public static func unwrapKey(_ wrapped: String, with key: TidingsCrypto.SymmetricKey) throws(OpenMatesCryptoError)
        -> TidingsCrypto.SymmetricKey
    {
        try OpenMatesChatKeyWrap.unwrapKey(wrapped, with: key, what: "wrapped embed key")
    }

    /// Wraps an embed key under `key` with a fresh random IV.
    public static func wrapKey(_ embedKey: TidingsCrypto.SymmetricKey, with key: TidingsCrypto.SymmetricKey)
        throws(CryptoError) -> String
    {
        try OpenMatesChatKeyWrap.sealIVPrefixed(embedKey.bytes, with: key)
    }

    /// Decrypts one embed field as UTF-8 text.
    ///
    /// - Throws: what ``unwrapKey(_:with:)`` throws for the layout and the tag, or
    ///   ``OpenMatesCryptoError/notText``.
    public static func openText(_ field: String, embedKey: TidingsCrypto.SymmetricKey) throws(OpenMatesCryptoError)
        -> String
    {
        let plain = try OpenMatesChatKeyWrap.openIVPrefixed(field, with: embedKey, what: "embed field")
        guard let text = OpenMatesUTF8.text(plain) else {
            throw OpenMatesCryptoError(.notText, detail: "embed field of \(plain.count) bytes")
        }
        return text
    }

    /// Seals UTF-8 text as an embed field under the embed key with a fresh random IV.
    public static func sealText(_ text: String, embedKey: TidingsCrypto.SymmetricKey) throws(CryptoError) -> String {
        try OpenMatesChatKeyWrap.sealIVPrefixed(Array(text.utf8), with: embedKey)
    }

    /// The key of the embed `embedID` from `entries`, as the web client resolves it: a `master` entry under
    /// `masterKey` first, then a `chat` entry of this chat under `chatKey`; for a child embed whose own entries
    /// do not open, its parent's key (`parentOf` gives an embed's `parent_embed_id`; a cycle ends the search).
    ///
    /// - Throws: ``OpenMatesCryptoError/noEmbedKey`` when no entry names the embed or its ancestors; otherwise
    ///   the error of the last entry tried (``OpenMatesCryptoError/authenticationFailed`` for a key wrapped by
    ///   another key).
    public static func embedKey(
        embedID: String, chatID: String, entries: [OpenMatesEmbedKeyEntry], masterKey: TidingsCrypto.SymmetricKey,
        chatKey: TidingsCrypto.SymmetricKey?, parentOf: (String) -> String? = { _ in nil }
    ) throws(OpenMatesCryptoError) -> TidingsCrypto.SymmetricKey {
        let hashedChat = OpenMatesStore.hashedChatID(chatID)
        var lastError: OpenMatesCryptoError?
        var visited: Set<String> = []
        var current: String? = embedID
        while let id = current, visited.insert(id).inserted {
            let hashed = hashedEmbedID(id)
            let own = entries.filter { $0.hashedEmbedID == hashed }
            var candidates: [(OpenMatesEmbedKeyEntry, TidingsCrypto.SymmetricKey)] = own.filter {
                $0.keyType == .master
            }.map { ($0, masterKey) }
            if let chatKey {
                candidates += own.filter { $0.keyType == .chat && $0.hashedChatID == hashedChat }.map { ($0, chatKey) }
            }
            for (entry, key) in candidates {
                do {
                    return try unwrapKey(entry.encryptedEmbedKey, with: key)
                } catch {
                    lastError = error
                }
            }
            if !own.isEmpty, candidates.isEmpty, lastError == nil {
                lastError = OpenMatesCryptoError(
                    .noEmbedKey, detail: "no master entry, and no chat entry this chat's key can open")
            }
            current = parentOf(id)
        }
        throw lastError ?? OpenMatesCryptoError(.noEmbedKey, detail: "no embed_keys entry for the embed")
    }
}
