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
    let masterKey: TidingsCrypto.SymmetricKey
    private let hiddenChatUnlocks: [OpenMatesHiddenChatUnlock]

    /// Creates a decryptor for the user's master key (never logged: `SymmetricKey` redacts itself) and the
    /// unlocks of the hidden chats the user opened (none: every hidden chat reads as
    /// ``OpenMatesCryptoError/hiddenChatLocked``).
    public init(masterKey: TidingsCrypto.SymmetricKey, hiddenChatUnlocks: [OpenMatesHiddenChatUnlock] = []) {
        self.masterKey = masterKey
        self.hiddenChatUnlocks = hiddenChatUnlocks
    }

    /// The chat's key, unwrapped from ``OpenMatesChat/encryptedChatKey``: by the master key, or, for a hidden
    /// chat, by one of the unlocks.
    ///
    /// - Throws: ``OpenMatesCryptoError/noChatKey`` when the chat has none;
    ///   ``OpenMatesCryptoError/hiddenChatLocked`` when the master key does not open it and no unlock does;
    ///   the layout errors of ``OpenMatesChatKeyWrap/unwrap(_:masterKey:)`` and
    ///   ``OpenMatesCryptoError/invalidChatKey`` otherwise.
    public func chatKey(for chat: OpenMatesChat) throws(OpenMatesCryptoError) -> TidingsCrypto.SymmetricKey {
        try keyAccess(for: chat).key
    }

    /// How the chat's key opens: visible (the master key), hidden and unlocked, or hidden and locked.
    public func access(to chat: OpenMatesChat) -> OpenMatesChatAccess {
        do {
            return try keyAccess(for: chat).access
        } catch .hiddenChatLocked {
            return .hiddenLocked
        } catch {
            return .unavailable(error)
        }
    }

    private func keyAccess(for chat: OpenMatesChat) throws(OpenMatesCryptoError) -> (
        key: TidingsCrypto.SymmetricKey, access: OpenMatesChatAccess
    ) {
        guard let wrapped = chat.encryptedChatKey else {
            throw OpenMatesCryptoError(.noChatKey, detail: "the chat has no encrypted_chat_key")
        }
        do {
            return (try OpenMatesChatKeyWrap.unwrap(wrapped, masterKey: masterKey), .visible)
        } catch .authenticationFailed {
            // The web client's test for a hidden chat: its key is wrapped by another secret.
            for unlock in hiddenChatUnlocks {
                if let key = try? unlock.unwrap(wrapped) { return (key, .hiddenUnlocked) }
            }
            throw OpenMatesCryptoError(
                .hiddenChatLocked,
                detail: "the master key does not open the chat key, nor do \(hiddenChatUnlocks.count) unlock(s)")
        }
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
    ///
    /// Titles are sealed under the chat key; the public source's format notes also name titles sealed under the
    /// master key itself (IV ‖ ciphertext ‖ tag, no header), so a title in that layout the chat key does not
    /// open is tried under the master key before its error is reported.
    public func title(of chat: OpenMatesChat) -> Result<String, OpenMatesCryptoError>? {
        chat.encryptedTitle.map { blob in
            Result { () throws(OpenMatesCryptoError) -> String in
                let parsed = try OpenMatesContentBlob(base64: blob)
                do throws(OpenMatesCryptoError) {
                    return try parsed.openText(with: chatKey(for: chat))
                } catch {
                    guard parsed.form == .legacy, let text = try? parsed.openText(with: masterKey) else { throw error }
                    return text
                }
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

/// How a chat's key opens, as ``OpenMatesContentDecryptor/access(to:)`` finds it.
public enum OpenMatesChatAccess: Sendable {
    /// The master key opens it: an ordinary chat.
    case visible
    /// A hidden chat an unlock opened.
    case hiddenUnlocked
    /// A hidden chat no unlock at hand opens (or a damaged key, which looks the same): its content stays sealed
    /// until the app supplies the unlock (``OpenMatesHiddenChatUnlock``).
    case hiddenLocked
    /// The key is missing or malformed (the error says how).
    case unavailable(OpenMatesCryptoError)

    /// Whether the chat is hidden (locked or not).
    public var isHidden: Bool {
        switch self {
        case .hiddenLocked, .hiddenUnlocked: true
        case .visible, .unavailable: false
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
