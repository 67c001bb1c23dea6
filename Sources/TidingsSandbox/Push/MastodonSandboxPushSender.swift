import Foundation
import TidingsCore
import TidingsNet
import TidingsPush

/// How the Mastodon sandbox sends Web Push, as Mastodon does: the notification as JSON (`notification_id`,
/// `notification_type`, `title`, `body`, `icon`, `preferred_locale`), encrypted for the subscription
/// (`aes128gcm` when it asked for `standard`, else the legacy `aesgcm`), VAPID-signed with the server's key, and
/// POSTed to the subscription's endpoint with `TTL` and `Urgency`.
public struct MastodonSandboxPushSender: Sendable {
    /// One attempt to deliver a push.
    public struct Delivery: Sendable {
        /// The subscription's endpoint.
        public let endpoint: URL
        /// The notification pushed.
        public let notificationID: String
        /// The push service's status, or nil when no answer arrived.
        public let status: Int?
        /// Why nothing was sent or no answer arrived.
        public let failure: String?
    }

    /// Sends one request (an `HTTPClient` on loopback; anything that answers in tests).
    public typealias Transport = @Sendable (HTTPRequest) async throws -> HTTPResponse

    let transport: Transport
    let subject: String
    let now: @Sendable () -> Date

    /// A sender posting through `transport`, signing as `subject` (a `mailto:` or `https:` contact).
    public init(
        transport: @escaping Transport = { try await HTTPClient().response(for: $0) },
        subject: String = "mailto:admin@sandbox.invalid", now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.transport = transport
        self.subject = subject
        self.now = now
    }

    /// Encrypts `payload` for `subscription`, signs and POSTs it; never throws (the outcome is the delivery).
    func send(
        _ payload: JSONValue, notificationID: String, to subscription: MastodonSandboxPushSubscriptions.Subscription,
        vapidKey: TidingsCrypto.P256.Signing.PrivateKey
    ) async -> Delivery {
        do {
            let message = try WebPushEncryptor.encrypt(
                [UInt8](payload.jsonData(sortedKeys: true)), receiverPublicKey: subscription.publicKey,
                authSecret: subscription.authSecret, encoding: subscription.standard ? .aes128gcm : .aesgcm)
            let vapid = try WebPushVAPID.headers(
                endpoint: subscription.endpoint, key: vapidKey, subject: subject,
                expiry: now().addingTimeInterval(12 * 3600), standard: subscription.standard)
            var request = HTTPRequest(method: .post, url: subscription.endpoint, body: Data(message.body))
            request.timeout = .seconds(30)
            request.headers["Content-Type"] = "application/octet-stream"
            request.headers["TTL"] = "172800"
            request.headers["Urgency"] = "normal"
            request.headers["Authorization"] = vapid.authorization
            for header in message.headers {
                if header.name == "Crypto-Key", let signing = vapid.cryptoKey {
                    request.headers["Crypto-Key"] = "\(header.value);\(signing)"
                } else {
                    request.headers[header.name] = header.value
                }
            }
            let response = try await transport(request)
            return Delivery(
                endpoint: subscription.endpoint, notificationID: notificationID, status: response.status, failure: nil)
        } catch {
            let reason = (error as? any TidingsError)?.shortDescription ?? "\(type(of: error))"
            return Delivery(
                endpoint: subscription.endpoint, notificationID: notificationID, status: nil, failure: reason)
        }
    }
}
