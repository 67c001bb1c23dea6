import Foundation
import TidingsCore

/// Opens the pushes a Nextcloud server sends through its push proxy to one device and account:
/// verifies the `signature` (RSASSA-PKCS1-v1_5 SHA-512 by the account's key, over the encrypted
/// bytes) before anything is decrypted, then decrypts the one-block `subject` with the device key.
///
/// A push that fails any step throws a typed ``NextcloudPushError`` and has changed nothing.
public struct NextcloudProxyPushDecryptor: Sendable {
    /// The device's RSA key whose public half was registered as `devicePublicKey`.
    public let deviceKey: TidingsCrypto.RSA.PrivateKey
    /// The account's key as the server answered it at registration (`publicKey`).
    public let userPublicKey: TidingsCrypto.RSA.PublicKey

    /// Creates a decryptor for one registration.
    public init(deviceKey: TidingsCrypto.RSA.PrivateKey, userPublicKey: TidingsCrypto.RSA.PublicKey) {
        self.deviceKey = deviceKey
        self.userPublicKey = userPublicKey
    }

    /// Opens a push from its `data` fields (base64 `subject` and `signature`, as the proxy forwards them).
    ///
    /// - Throws: `.malformedMessage` for text that is not base64, `.invalidSignature` for a signature that
    ///   is not the account's over these bytes, `.undecryptable`, `.malformedSubject`.
    public func open(subject: String, signature: String) throws(NextcloudPushError) -> NextcloudProxySubject {
        guard subject.utf8.count <= 4096, signature.utf8.count <= 4096 else {
            throw .malformedMessage("subject or signature too long")
        }
        guard let encrypted = Data(base64Encoded: subject), let signatureBytes = Data(base64Encoded: signature) else {
            throw .malformedMessage("subject or signature is not base64")
        }
        let block = [UInt8](encrypted)
        guard userPublicKey.isValidSignatureSHA512PKCS1([UInt8](signatureBytes), for: block) else {
            throw .invalidSignature
        }
        guard block.count == deviceKey.bitCount / 8 else { throw .undecryptable }
        // OAEP(SHA-1) first; PKCS#1 v1.5 (what the server uses today) rejects implicitly, so which one
        // held is decided by whether the plaintext parses, never by a padding error.
        if let plain = try? deviceKey.decrypt(block, padding: .oaepSHA1) {
            return try NextcloudProxySubject(decryptedJSON: plain)
        }
        guard let plain = try? deviceKey.decrypt(block, padding: .pkcs1v15) else { throw .undecryptable }
        return try NextcloudProxySubject(decryptedJSON: plain)
    }

    /// Opens a push given as its JSON `data` object (`{"subject": …, "signature": …}`), e.g. an APNs
    /// payload's custom fields or the sandbox proxy's body.
    ///
    /// - Throws: `.malformedMessage` when the JSON lacks either string; then as ``open(subject:signature:)``.
    public func open(messageJSON bytes: [UInt8]) throws(NextcloudPushError) -> NextcloudProxySubject {
        guard let value = try? JSONValue(parsing: bytes, maximumDepth: 4),
            let subject = value["subject"]?.stringValue, let signature = value["signature"]?.stringValue
        else { throw .malformedMessage("not {\"subject\", \"signature\"}") }
        return try open(subject: subject, signature: signature)
    }
}
