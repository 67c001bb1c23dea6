import TidingsCore

/// One stored message with its content decrypted, or the reason it could not be.
public struct OpenMatesDecryptedMessage: Sendable {
    /// The message as stored (content still encrypted in ``OpenMatesMessage/raw``).
    public var message: OpenMatesMessage
    /// The plaintext of `encrypted_content`, or why this message (only this one) did not decrypt.
    public var content: Result<String, OpenMatesCryptoError>
}

/// An `OpenMatesContentDecryptor` is what an app holds to read OpenMates content in clear: it unwraps each
/// chat's key with the user's master key and decrypts messages, titles and drafts.
///
/// Results are per value: a message sealed under another key (``OpenMatesCryptoError/fingerprintMismatch``)
/// or damaged fails alone, and the chat's other messages still decrypt. Nothing is cached or written: the
/// plaintext lives only in the values returned.
///
/// For example:
/// ```swift
/// let decryptor = OpenMatesContentDecryptor(masterKey: masterKey)
/// for item in try store.decryptedMessages(chatID: id, masterKey: masterKey) {
///     print(item.message.role, (try? item.content.get()) ?? "(cannot decrypt)")
/// }
/// ```
public struct OpenMatesContentDecryptor: Sendable {
    private let masterKey: TidingsCrypto.SymmetricKey

    /// Creates a decryptor for the user's master key (never logged: `SymmetricKey` redacts itself).
    public init(masterKey: TidingsCrypto.SymmetricKey) {
        self.masterKey = masterKey
    }

    /// The chat's key, unwrapped from ``OpenMatesChat/encryptedChatKey``.
    ///
    /// - Throws: ``OpenMatesCryptoError/noChatKey`` when the chat has none; otherwise what
    ///   ``OpenMatesChatKeyWrap/unwrap(_:masterKey:)`` throws.
    public func chatKey(for chat: OpenMatesChat) throws(OpenMatesCryptoError) -> TidingsCrypto.SymmetricKey {
        guard let wrapped = chat.encryptedChatKey else {
            throw OpenMatesCryptoError(.noChatKey, detail: "the chat has no encrypted_chat_key")
        }
        return try OpenMatesChatKeyWrap.unwrap(wrapped, masterKey: masterKey)
    }

    /// Decrypts one blob's text under `chatKey`.
    public func decrypt(_ blob: String, chatKey: TidingsCrypto.SymmetricKey) -> Result<String, OpenMatesCryptoError> {
        Result { () throws(OpenMatesCryptoError) -> String in
            try OpenMatesContentBlob(base64: blob).openText(with: chatKey)
        }
    }

    /// Every message of `chat` with its `encrypted_content` decrypted, in the order given. When the chat key
    /// itself does not unwrap, every message carries that error.
    public func decrypt(_ messages: [OpenMatesMessage], of chat: OpenMatesChat) -> [OpenMatesDecryptedMessage] {
        let key = Result { () throws(OpenMatesCryptoError) -> TidingsCrypto.SymmetricKey in try chatKey(for: chat) }
        return messages.map { message in
            let content = key.flatMap { key -> Result<String, OpenMatesCryptoError> in
                guard let blob = message.raw["encrypted_content"]?.stringValue else {
                    return .failure(OpenMatesCryptoError(.empty, detail: "no encrypted_content"))
                }
                return decrypt(blob, chatKey: key)
            }
            return OpenMatesDecryptedMessage(message: message, content: content)
        }
    }

    /// The chat's title in clear; nil when the chat has no encrypted title.
    public func title(of chat: OpenMatesChat) -> Result<String, OpenMatesCryptoError>? {
        chat.encryptedTitle.map { blob in
            Result { () throws(OpenMatesCryptoError) -> String in
                try OpenMatesContentBlob(base64: blob).openText(with: chatKey(for: chat))
            }
        }
    }

    /// The user's draft in clear; nil when the chat has no draft.
    public func draft(of chat: OpenMatesChat) -> Result<String, OpenMatesCryptoError>? {
        chat.encryptedDraft.map { blob in
            Result { () throws(OpenMatesCryptoError) -> String in
                try OpenMatesContentBlob(base64: blob).openText(with: chatKey(for: chat))
            }
        }
    }
}

extension OpenMatesStore {
    /// A stored chat's messages (oldest first), each decrypted with the chat's key unwrapped by `masterKey`.
    ///
    /// One message that does not decrypt (another key, damaged, not base64) carries its own error; the others
    /// decrypt. An empty list when the chat is not stored.
    ///
    /// - Throws: `StoreError` when the store cannot be read; never a decryption error.
    public func decryptedMessages(chatID: String, masterKey: TidingsCrypto.SymmetricKey) throws
        -> [OpenMatesDecryptedMessage]
    {
        guard let chat = try chat(chatID)?.chat else { return [] }
        return OpenMatesContentDecryptor(masterKey: masterKey).decrypt(try messages(chatID: chatID), of: chat)
    }
}
