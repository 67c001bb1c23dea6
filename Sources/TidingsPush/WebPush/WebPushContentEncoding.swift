import Foundation

/// The two content encodings a Web Push message arrives in.
public enum WebPushContentEncoding: String, Sendable, CaseIterable {
    /// RFC 8291 on RFC 8188: the salt, record size and sender key travel in the body's header.
    case aes128gcm
    /// The legacy draft encoding Mastodon sends unless the subscription says `standard`: the sender key travels
    /// in `Crypto-Key: dh=…` and the salt in `Encryption: salt=…`.
    case aesgcm

    /// The encoding a `Content-Encoding` header names (case and surrounding spaces ignored).
    ///
    /// - Throws: ``WebPushError/unsupportedEncoding`` for any other value.
    public init(headerValue: String) throws(WebPushError) {
        let trimmed = headerValue.trimmingCharacters(in: .whitespaces).lowercased()
        guard let encoding = WebPushContentEncoding(rawValue: trimmed) else {
            throw .with(.unsupportedEncoding, "Content-Encoding is neither aes128gcm nor aesgcm")
        }
        self = encoding
    }
}
