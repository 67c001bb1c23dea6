import Foundation
import TidingsCore
import TidingsMastodon

/// The four calls of Mastodon's Web Push subscription API for one account (one subscription per access token),
/// sent through the account's `MastodonAPIClient` — its bearer token, rate budget and errors.
public struct MastodonPushSubscriptionClient: Sendable {
    static let path = "/api/v1/push/subscription"

    /// The account's API client.
    public let api: MastodonAPIClient

    /// A client for the account `api` acts as.
    public init(api: MastodonAPIClient) { self.api = api }

    /// `POST /api/v1/push/subscription`, form-encoded: creates the token's subscription, replacing any earlier
    /// one. `standard` asks for RFC 8291 `aes128gcm` (Mastodon 4.4+; older servers ignore it and send `aesgcm`).
    ///
    /// - Throws: `MastodonError` (`MastodonError.decoding` for an answer without id, endpoint or server key).
    public func subscribe(
        endpoint: URL, keys: WebPushSubscriptionKeys, alerts: MastodonPushAlerts, policy: MastodonPushPolicy,
        standard: Bool = true
    ) async throws -> MastodonPushSubscription {
        let form: [(String, String)] =
            [
                ("subscription[endpoint]", endpoint.absoluteString),
                ("subscription[keys][p256dh]", keys.base64URLPublicKey),
                ("subscription[keys][auth]", keys.base64URLAuthSecret),
                ("subscription[standard]", standard ? "true" : "false"),
                ("data[policy]", policy.rawValue),
            ] + alerts.formFields
        return try await decode(api.send(.post, Self.path, form: form).body)
    }

    /// `PUT /api/v1/push/subscription`: changes the alerts and policy of the existing subscription (keys and
    /// endpoint stay).
    ///
    /// - Throws: `MastodonError` (`MastodonError.notFound` when the token has no subscription).
    public func update(alerts: MastodonPushAlerts, policy: MastodonPushPolicy) async throws
        -> MastodonPushSubscription
    {
        try await decode(api.send(.put, Self.path, form: [("data[policy]", policy.rawValue)] + alerts.formFields).body)
    }

    /// `GET /api/v1/push/subscription`: the token's subscription, or nil when it has none (404).
    public func current() async throws -> MastodonPushSubscription? {
        do {
            return try await decode(api.send(.get, Self.path).body)
        } catch MastodonError.notFound {
            return nil
        }
    }

    /// `DELETE /api/v1/push/subscription`: removes the token's subscription; one that is already gone counts
    /// as removed.
    public func unsubscribe() async throws {
        do {
            _ = try await api.send(.delete, Self.path)
        } catch MastodonError.notFound {
            return
        }
    }

    private func decode(_ body: Data) throws -> MastodonPushSubscription {
        guard let json = try? JSONValue(parsing: body), let subscription = MastodonPushSubscription(json: json) else {
            throw MastodonError.decoding
        }
        return subscription
    }
}
