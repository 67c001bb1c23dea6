import Foundation
import TidingsCore
import TidingsNet
import TidingsPush
import TidingsSandboxKit

/// The Nextcloud sandbox's outgoing pushes, both ways a real server sends them: through the push proxy (RSA to
/// the device key, signed by the account key, POSTed by the proxy stand-in to the push token) and through Web Push
/// (RFC 8291 `aes128gcm`, VAPID-signed, to the subscription's endpoint). Every HTTP delivery is recorded.
final class NextcloudSandboxPusher: Sendable {
    let state: NextcloudSandboxState
    let vapidKey: TidingsCrypto.P256.Signing.PrivateKey
    let webPushSender: MastodonSandboxPushSender
    let deliver: NextcloudSandboxServer.Deliver?
    let transport: MastodonSandboxPushSender.Transport
    let sent = SandboxPushWaiters<MastodonSandboxPushSender.Delivery>()
    let onDelivery: (@Sendable (MastodonSandboxPushSender.Delivery) -> Void)?

    init(
        state: NextcloudSandboxState, transport: @escaping MastodonSandboxPushSender.Transport,
        deliver: NextcloudSandboxServer.Deliver?,
        onDelivery: (@Sendable (MastodonSandboxPushSender.Delivery) -> Void)? = nil
    ) throws {
        self.state = state
        self.onDelivery = onDelivery
        self.transport = transport
        self.deliver = deliver
        vapidKey = try TidingsCrypto.P256.Signing.PrivateKey()
        webPushSender = MastodonSandboxPushSender(
            transport: transport, subject: "mailto:admin@nextcloud.sandbox.invalid")
    }

    /// Pushes one subject (a notification of `app`, or a withdrawal when `app` is nil) to the proxy device and
    /// the active Web Push subscription; returns when both deliveries finished.
    func push(_ fields: [String: JSONValue], app: String?) async {
        let label = fields["nid"]?.identifierValue ?? "withdrawal"
        if let target = await state.pushTarget(), let body = sealed(fields, for: target.device.publicKey) {
            if let deliver {
                await deliver(target.pushToken, body)
            } else {
                await post(body, to: target.pushToken, label: label)
            }
        }
        if let subscription = await state.webPushTarget(app: app) {
            record(
                await webPushSender.send(
                    .object(fields), notificationID: label, to: subscription.senderSubscription, vapidKey: vapidKey))
        }
    }

    /// Sends the activation push of a new Web Push subscription, as the server does right after its 201 (in a
    /// task of its own, so the 201 is not held up by the push).
    func sendActivation(_ subscription: NextcloudSandboxWebPushSubscription) {
        let payload: JSONValue = .object(["activationToken": .string(subscription.activationToken)])
        Task {
            record(
                await webPushSender.send(
                    payload, notificationID: "activation", to: subscription.senderSubscription, vapidKey: vapidKey))
        }
    }

    /// The proxy body `{"subject", "signature"}`: the JSON encrypted with PKCS#1 v1.5 (what Nextcloud uses; at
    /// most 245 bytes fit a 2048-bit block, so the subject is shortened until it fits, as Nextcloud does) and
    /// the encrypted bytes signed with the account key (SHA-512).
    private func sealed(_ fields: [String: JSONValue], for device: TidingsCrypto.RSA.PublicKey) -> Data? {
        var fields = fields
        while JSONValue.object(fields).jsonData().count > 245, let subject = fields["subject"]?.stringValue,
            !subject.isEmpty
        {
            let shorter = subject.dropLast(max(2, subject.count / 8))
            fields["subject"] = .string(shorter.isEmpty ? "" : String(shorter) + "…")
        }
        guard let block = try? device.encrypt(Array(JSONValue.object(fields).jsonData()), padding: .pkcs1v15),
            let signature = try? state.userKey.signatureSHA512PKCS1(for: block)
        else { return nil }
        let body: JSONValue = .object([
            "subject": .string(Data(block).base64EncodedString()),
            "signature": .string(Data(signature).base64EncodedString()),
        ])
        return body.jsonData()
    }

    /// The proxy stand-in's POST to a push token, recorded like a Web Push delivery.
    private func post(_ body: Data, to pushToken: String, label: String) async {
        guard let url = URL(string: pushToken), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
            record(
                .init(
                    endpoint: URL(fileURLWithPath: "/"), notificationID: label, status: nil,
                    failure: "the push token is not an http(s) URL"))
            return
        }
        var request = HTTPRequest(method: .post, url: url, body: body)
        request.timeout = .seconds(30)
        request.headers["Content-Type"] = "application/json"
        do {
            let response = try await transport(request)
            record(.init(endpoint: url, notificationID: label, status: response.status, failure: nil))
        } catch {
            let reason = (error as? any TidingsError)?.shortDescription ?? "\(type(of: error))"
            record(.init(endpoint: url, notificationID: label, status: nil, failure: reason))
        }
    }

    private func record(_ delivery: MastodonSandboxPushSender.Delivery) {
        sent.append(delivery)
        onDelivery?(delivery)
    }
}
