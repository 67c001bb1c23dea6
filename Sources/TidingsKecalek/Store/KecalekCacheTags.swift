import TidingsCore

/// The cache's lookup columns: keyed HMACs of the conversation and message IDs, so the file answers
/// "which row is message M of conversation C" only to someone holding the store key.
///
/// Both keys are derived from the store key with HKDF under labels of their own, so a tag reveals nothing
/// about the sealing key and the two tags cannot be compared with each other. Tags are deterministic (the
/// same ID gives the same tag on every run): that is what makes them usable as an index, and it means the
/// file shows which rows belong to the same conversation, never which conversation it is.
struct KecalekCacheTags: Sendable {
    /// Bytes kept of each HMAC-SHA-256: 128 bits, so tags of distinct IDs never collide in practice.
    static let byteCount = 16

    private let conversationKey: [UInt8]
    private let messageKey: [UInt8]

    /// Derives both tag keys from the store's key.
    ///
    /// - Throws: ``KecalekError/cache`` if the key derivation refuses the key (it takes any length).
    init(storeKey: TidingsCrypto.SymmetricKey) throws {
        do {
            conversationKey = try TidingsCrypto.HKDF.deriveKey(
                inputKeyMaterial: storeKey.bytes, info: Array("tidings.kecalek.cache.conversation-tag".utf8),
                outputByteCount: 32)
            messageKey = try TidingsCrypto.HKDF.deriveKey(
                inputKeyMaterial: storeKey.bytes, info: Array("tidings.kecalek.cache.message-tag".utf8),
                outputByteCount: 32)
        } catch {
            throw KecalekError(.cache, operation: "cache.open", detail: "cannot derive the tag keys: \(error)")
        }
    }

    /// The `conversation_tag` of a conversation.
    func conversation(_ conversationID: String) -> [UInt8] {
        Array(
            TidingsCrypto.HMACSHA256.authenticationCode(for: Array(conversationID.utf8), key: conversationKey).prefix(
                Self.byteCount))
    }

    /// The `message_tag` of a message: bound to its conversation too, so the same message ID in two
    /// conversations gets unrelated tags.
    func message(conversationID: String, messageID: String) -> [UInt8] {
        let conversation = Array(conversationID.utf8)
        // Length-prefixed, so ("a/b", "c") and ("a", "b/c") never share a tag.
        var input = withUnsafeBytes(of: UInt32(truncatingIfNeeded: conversation.count).bigEndian) { Array($0) }
        input += conversation
        input += Array(messageID.utf8)
        return Array(TidingsCrypto.HMACSHA256.authenticationCode(for: input, key: messageKey).prefix(Self.byteCount))
    }
}
