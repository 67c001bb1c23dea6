import Foundation
import TidingsCore

/// What the Nextcloud server answered to a proxy registration: what the device needs to talk to the
/// proxy and to verify pushes. Persist it with the account (none of it is secret but the push token's
/// link to it); ``userPublicKey`` feeds ``NextcloudProxyPushDecryptor``.
public struct NextcloudProxyRegistration: Sendable, Hashable {
    /// The account's RSA public key on that server (PEM), which signs every push.
    public let userPublicKey: String
    /// The server's identifier for this device, signed by the account key.
    public let deviceIdentifier: String
    /// Base64 signature of ``deviceIdentifier`` by the account key.
    public let signature: String
    /// The proxy the server sends pushes to (`https://push-notifications.nextcloud.com` for the official apps).
    public let proxyServer: URL

    /// Creates a registration (e.g. restored from the app's store).
    public init(userPublicKey: String, deviceIdentifier: String, signature: String, proxyServer: URL) {
        self.userPublicKey = userPublicKey
        self.deviceIdentifier = deviceIdentifier
        self.signature = signature
        self.proxyServer = proxyServer
    }

    /// `pushTokenHash`: the SHA-512 of the push token, as lowercase hex (what the server stores instead
    /// of the token).
    public static func pushTokenHash(_ pushToken: String) -> String {
        TidingsCrypto.SHA512.hash(Array(pushToken.utf8)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
