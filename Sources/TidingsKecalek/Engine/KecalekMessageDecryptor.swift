import Foundation

/// Turns a message's `encrypted_payload` into its plaintext JSON payload.
///
/// Kecalek does not publish its cipher, so decryption is pluggable. Implementations must be
/// thread-safe and must throw (never return garbage) when a blob fails authentication.
public protocol KecalekMessageDecryptor: Sendable {
    /// Decrypts one sealed payload.
    ///
    /// - Throws: ``KecalekError/decryption`` when the blob was altered or the key is wrong,
    ///   ``KecalekError/missingKey`` when no key is known for the conversation.
    func decrypt(_ sealed: Data, conversationID: String, messageID: String) throws -> Data
}
