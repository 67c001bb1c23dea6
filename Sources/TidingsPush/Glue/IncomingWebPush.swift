import Foundation

/// One Web Push message as the push endpoint received it: the endpoint it was addressed to (which names the
/// account) and the encrypted body with its encoding headers. Nothing in it is decrypted yet.
public struct IncomingWebPush: Sendable {
    /// The endpoint URL the push service delivered to (the account's own).
    public var endpoint: URL
    /// The encrypted body.
    public var body: [UInt8]
    /// `Content-Encoding` (`aes128gcm` or `aesgcm`).
    public var contentEncoding: String?
    /// `Crypto-Key` (legacy `aesgcm` only).
    public var cryptoKey: String?
    /// `Encryption` (legacy `aesgcm` only).
    public var encryption: String?

    /// A received push.
    public init(
        endpoint: URL, body: [UInt8], contentEncoding: String?, cryptoKey: String? = nil, encryption: String? = nil
    ) {
        self.endpoint = endpoint
        self.body = body
        self.contentEncoding = contentEncoding
        self.cryptoKey = cryptoKey
        self.encryption = encryption
    }
}
