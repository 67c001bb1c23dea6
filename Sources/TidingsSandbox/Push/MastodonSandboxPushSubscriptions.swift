import Foundation
import TidingsCore
import TidingsPush
import TidingsSandboxKit

/// The Web Push subscriptions of a Mastodon sandbox, one per access token, with Mastodon's semantics for
/// `POST/GET/PUT/DELETE /api/v1/push/subscription`:
/// - `POST` validates the endpoint (an absolute http(s) URL), `keys[p256dh]` (a P-256 point, base64url) and
///   `keys[auth]` (16 bytes) — 422 otherwise — and replaces the token's earlier subscription;
/// - `GET` and `PUT` answer 404 when the token has none; `PUT` changes alerts and policy only;
/// - `DELETE` answers `{}` whether or not there was one.
///
/// Thread-safe (its state is behind one lock), so the server's synchronous handlers call it directly.
public final class MastodonSandboxPushSubscriptions: Sendable {
    /// One stored subscription.
    public struct Subscription: Sendable, Equatable {
        /// The sandbox's id for it.
        public var id: String
        /// Where pushes go.
        public var endpoint: URL
        /// The subscriber's public key (65 bytes).
        public var publicKey: [UInt8]
        /// The subscriber's auth secret (16 bytes).
        public var authSecret: [UInt8]
        /// RFC 8291 `aes128gcm` when true, the legacy `aesgcm` draft otherwise.
        public var standard: Bool
        /// The alert keys switched on.
        public var alerts: Set<String>
        /// `all`, `followed`, `follower` or `none`.
        public var policy: String
    }

    private struct State {
        var byToken: [String: Subscription] = [:]
        var nextID = 0
        var requests: [String] = []
        var pushesStarted = 0
    }
    private let state = LockedState(State())
    /// The server's VAPID key pair: its public key is every subscription's `server_key`; it signs the pushes.
    /// Nil only when the platform could not make a key: subscribing then answers 503.
    public let serverKey: TidingsCrypto.P256.Signing.PrivateKey?
    private let sender: LockedState<MastodonSandboxPushSender>
    private let sent = SandboxPushWaiters<MastodonSandboxPushSender.Delivery>()

    /// An empty registry with a fresh VAPID key, sending through `sender`.
    public init(sender: MastodonSandboxPushSender = MastodonSandboxPushSender()) {
        serverKey = try? TidingsCrypto.P256.Signing.PrivateKey()
        self.sender = LockedState(sender)
    }

    /// Replaces how pushes are sent (a test's transport, another contact).
    public func setSender(_ sender: MastodonSandboxPushSender) { self.sender.withLock { $0 = sender } }

    /// How many pushes were started (counted when the notification is made, before the POST): a test can tell
    /// at once that nothing was pushed, without waiting for something not to happen.
    public var pushesStarted: Int { state.withLock { $0.pushesStarted } }

    /// Every delivery attempted so far, in the order they finished.
    public var deliveries: [MastodonSandboxPushSender.Delivery] { sent.items }

    /// The deliveries once `count` have finished, or those finished when `timeout` passes.
    public func deliveries(count: Int, timeout: Duration = .seconds(30)) async -> [MastodonSandboxPushSender.Delivery] {
        await sent.wait(for: count, timeout: timeout)
    }

    /// Pushes `payload` (a notification of type `alert` for the holder of `token`) to the token's subscription
    /// when it has one with that alert switched on; the POST runs in a task of its own.
    func push(_ payload: JSONValue, notificationID: String, alert: String, token: String) {
        guard let subscription = subscription(token: token), subscription.alerts.contains(alert),
            subscription.policy != "none", let serverKey
        else { return }
        let sender = self.sender.withLock { $0 }
        state.withLock { $0.pushesStarted += 1 }
        let sent = self.sent
        Task {
            sent.append(
                await sender.send(payload, notificationID: notificationID, to: subscription, vapidKey: serverKey))
        }
    }

    /// The subscription of `token`, if any.
    public func subscription(token: String) -> Subscription? { state.withLock { $0.byToken[token] } }

    /// The methods of the push endpoint in the order they arrived (`POST`, `PUT`, …), for tests of idempotence.
    public var requestLog: [String] { state.withLock { $0.requests } }

    /// Answers one request to `/api/v1/push/subscription` from the holder of `token`.
    public func answer(_ request: SandboxHTTPRequest, token: String) -> SandboxHTTPResponse {
        state.withLock { $0.requests.append(request.method) }
        let fields = request.formFields
        func field(_ name: String) -> String? { fields.last { $0.name == name }?.value }
        switch request.method {
        case "POST":
            guard serverKey != nil else { return Self.error(503, "Web Push is not available on this server") }
            guard let endpointText = field("subscription[endpoint]"), let endpoint = URL(string: endpointText),
                ["http", "https"].contains(endpoint.scheme ?? ""), endpoint.host != nil
            else { return Self.error(422, "Validation failed: Endpoint is not a valid URL") }
            guard let p256dh = field("subscription[keys][p256dh]"),
                let publicKey = try? WebPushBase64URL.decode(p256dh),
                (try? TidingsCrypto.P256.KeyAgreement.PublicKey(x963Representation: publicKey)) != nil
            else { return Self.error(422, "Validation failed: Key p256dh is invalid") }
            guard let authText = field("subscription[keys][auth]"), let auth = try? WebPushBase64URL.decode(authText),
                auth.count == 16
            else { return Self.error(422, "Validation failed: Key auth is invalid") }
            let policy = field("data[policy]") ?? "all"
            guard MastodonPushPolicy(rawValue: policy) != nil else { return Self.error(422, "Invalid policy") }
            let subscription = state.withLock { locked in
                locked.nextID += 1
                let subscription = Subscription(
                    id: String(locked.nextID), endpoint: endpoint, publicKey: publicKey, authSecret: auth,
                    standard: field("subscription[standard]") == "true", alerts: Self.alerts(fields), policy: policy)
                locked.byToken[token] = subscription
                return subscription
            }
            return .json(json(subscription))
        case "GET":
            guard let subscription = subscription(token: token) else { return Self.error(404, "Record not found") }
            return .json(json(subscription))
        case "PUT":
            let policy = field("data[policy]")
            if let policy, MastodonPushPolicy(rawValue: policy) == nil { return Self.error(422, "Invalid policy") }
            let updated: Subscription? = state.withLock { locked in
                guard var subscription = locked.byToken[token] else { return nil }
                subscription.alerts = Self.alerts(fields)
                if let policy { subscription.policy = policy }
                locked.byToken[token] = subscription
                return subscription
            }
            guard let updated else { return Self.error(404, "Record not found") }
            return .json(json(updated))
        case "DELETE":
            state.withLock { _ = $0.byToken.removeValue(forKey: token) }
            return .json(JSONValue.object([:]))
        default:
            return Self.error(405, "Method not allowed")
        }
    }

    /// Every subscription whose alerts include `alert`, with the token it belongs to.
    public func subscriptions(alert: String) -> [(token: String, subscription: Subscription)] {
        state.withLock { locked in
            locked.byToken.filter { $0.value.alerts.contains(alert) }.map { ($0.key, $0.value) }
        }
    }

    private static func alerts(_ fields: [(name: String, value: String)]) -> Set<String> {
        var alerts: Set<String> = []
        for (name, value) in fields where name.hasPrefix("data[alerts][") && name.hasSuffix("]") {
            let key = String(name.dropFirst("data[alerts][".count).dropLast())
            if value == "true" || value == "1" { alerts.insert(key) } else { alerts.remove(key) }
        }
        return alerts
    }

    private func json(_ subscription: Subscription) -> JSONValue {
        var alerts: [String: JSONValue] = [:]
        for key in MastodonPushAlerts.knownKeys { alerts[key] = .bool(subscription.alerts.contains(key)) }
        return .object([
            "id": .string(subscription.id), "endpoint": .string(subscription.endpoint.absoluteString),
            "standard": .bool(subscription.standard), "alerts": .object(alerts),
            "server_key": .string(serverKey.map { WebPushBase64URL.encode($0.publicKey.x963Representation) } ?? ""),
            "policy": .string(subscription.policy),
        ])
    }

    private static func error(_ status: Int, _ message: String) -> SandboxHTTPResponse {
        .json(JSONValue.object(["error": .string(message)]), status: status)
    }
}
