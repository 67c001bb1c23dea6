import Foundation
import TidingsCore

/// A Web Push subscription as the Mastodon server reports it (`WebPushSubscription`).
public struct MastodonPushSubscription: Sendable, Equatable {
    /// The server's id of the subscription (numbers are read as text).
    public let id: String
    /// Where the server sends pushes.
    public let endpoint: String
    /// The alerts switched on.
    public let alerts: MastodonPushAlerts
    /// The server's VAPID public key (base64url); pushes are signed with its private key.
    public let serverKey: String
    /// Whether the server sends RFC 8291 `aes128gcm` (true) or the legacy `aesgcm` draft (false or absent).
    public let standard: Bool
    /// The policy, when the server reports one.
    public let policy: MastodonPushPolicy?

    /// Reads the server's JSON; nil when `id`, `endpoint` or `server_key` is missing.
    init?(json: JSONValue) {
        let id: String?
        switch json["id"] {
        case .string(let text)?: id = text
        case let number? where number.intValue != nil: id = number.intValue.map(String.init)
        default: id = nil
        }
        guard let id, case .string(let endpoint)? = json["endpoint"], case .string(let serverKey)? = json["server_key"]
        else { return nil }
        var enabled: Set<String> = []
        if case .object(let alerts)? = json["alerts"] {
            for (key, value) in alerts where value.boolValue == true { enabled.insert(key) }
        }
        self.id = id
        self.endpoint = endpoint
        self.alerts = MastodonPushAlerts(enabled: enabled)
        self.serverKey = serverKey
        self.standard = json["standard"]?.boolValue ?? false
        if case .string(let policy)? = json["policy"] {
            self.policy = MastodonPushPolicy(rawValue: policy)
        } else {
            self.policy = nil
        }
    }
}
