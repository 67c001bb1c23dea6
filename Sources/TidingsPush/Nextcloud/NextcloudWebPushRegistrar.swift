import Foundation
import TidingsCore
import TidingsNet

/// Where a Nextcloud Web Push (UnifiedPush-style) subscription stands after a step.
public enum NextcloudWebPushState: Sendable, Hashable {
    /// Registered (201): the server is sending an `activationToken` through the push channel; pass the
    /// decrypted push to ``NextcloudWebPushRegistrar/activate(decryptedPush:)``.
    case awaitingActivation
    /// Active: notifications flow (200 on registration, or after activation).
    case active
    /// The administrator has not enabled Web Push on this server (403 `WEBPUSH_DISABLED`); poll instead.
    case disabledByAdministrator

    /// What to tell the person about this state, when there is something to say.
    public var message: String? {
        switch self {
        case .disabledByAdministrator:
            "The administrator of this Nextcloud server has not enabled Web Push, so notifications are checked periodically."
        case .awaitingActivation, .active: nil
        }
    }
}

/// A push subscription's public parts (RFC 8291), as Nextcloud's `POST …/webpush` takes them.
public struct NextcloudWebPushSubscription: Sendable, Hashable {
    /// The push endpoint (UnifiedPush distributor or browser push service), `https`.
    public let endpoint: URL
    /// The subscription's uncompressed P-256 public key, base64url (`p256dh`).
    public let uaPublicKey: String
    /// The 16-byte auth secret, base64url. - Warning: secret; never logged.
    public let auth: String

    /// Creates a subscription description.
    public init(endpoint: URL, uaPublicKey: String, auth: String) {
        self.endpoint = endpoint
        self.uaPublicKey = uaPublicKey
        self.auth = auth
    }
}

/// Registers one device of one Nextcloud account for Web Push (nextcloud/notifications webpush-v2):
/// VAPID key, subscription, activation by a token that arrives through the push channel, sign-out.
///
/// Decrypting the pushes (RFC 8291 `aes128gcm`) is the Web Push decryptor's job; this type takes the
/// decrypted activation push.
public struct NextcloudWebPushRegistrar: Sendable {
    private static let base = "ocs/v2.php/apps/notifications/api/v2/webpush"
    private let ocs: NextcloudOCSClient

    /// The Nextcloud server registered with.
    public var serverURL: URL { ocs.serverURL }
    /// The Nextcloud user registered for (not a secret; the app password never leaves the credentials).
    public var user: String { ocs.credentials.user }

    /// Creates a registrar that sends through `send` (`HTTPClient.response(for:)` or a sandbox).
    public init(
        serverURL: URL, credentials: NextcloudCredentials,
        send: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse
    ) {
        ocs = NextcloudOCSClient(serverURL: serverURL, credentials: credentials, send: send)
    }

    /// Creates a registrar over TidingsNet's `HTTPClient`.
    public init(serverURL: URL, credentials: NextcloudCredentials, client: HTTPClient) {
        self.init(serverURL: serverURL, credentials: credentials) { try await client.response(for: $0) }
    }

    /// The server's VAPID public key (base64url uncompressed P-256), the subscription's `applicationServerKey`.
    ///
    /// - Throws: `NextcloudPushError.refused`, `.unauthorized`, `.malformedResponse`, `.transport`.
    public func vapidKey() async throws(NextcloudPushError) -> String {
        let response = try await ocs.perform(ocs.request(.get, Self.base + "/vapid"), step: "server")
        guard response.status == 200 else { throw NextcloudOCSClient.refusal(response, step: "server") }
        guard let key = try NextcloudOCSClient.ocsData(response)["vapid"]?.stringValue, !key.isEmpty else {
            throw NextcloudPushError(.malformedResponse, detail: "no vapid key", step: "server")
        }
        return key
    }

    /// Registers `subscription` for notifications of `appTypes` (`all`, or e.g. `all,-spreed`).
    ///
    /// - Returns: `.awaitingActivation` (201), `.active` (200, already active: only the filter changed),
    ///   `.disabledByAdministrator` (403 `WEBPUSH_DISABLED`).
    /// - Throws: `.refused` with the OCS code (`INVALID_P256DH`, `INVALID_AUTH`, `INVALID_ENDPOINT`…),
    ///   `.unauthorized`, `.transport`.
    public func register(_ subscription: NextcloudWebPushSubscription, appTypes: String = "all")
        async throws(NextcloudPushError) -> NextcloudWebPushState
    {
        let body: JSONValue = .object([
            "endpoint": .string(subscription.endpoint.absoluteString), "uaPublicKey": .string(subscription.uaPublicKey),
            "auth": .string(subscription.auth), "appTypes": .string(appTypes),
        ])
        let response = try await ocs.perform(ocs.request(.post, Self.base, body: body), step: "server")
        switch response.status {
        case 200: return .active
        case 201: return .awaitingActivation
        default: return try Self.disabledOrThrow(response)
        }
    }

    /// Confirms the subscription with the activation push (its decrypted JSON, `{"activationToken": …}`).
    ///
    /// - Returns: `.active` (202 activated, or 200 already active), `.disabledByAdministrator` (403).
    /// - Throws: `.malformedSubject` when the push holds no token; `.refused` (400
    ///   `INVALID_ACTIVATION_TOKEN`, 404 `NO_PUSH_SUBSCRIPTION`), `.unauthorized`, `.transport`.
    public func activate(decryptedPush: [UInt8]) async throws(NextcloudPushError) -> NextcloudWebPushState {
        guard let value = try? JSONValue(parsing: decryptedPush, maximumDepth: 4),
            let token = value["activationToken"]?.stringValue, !token.isEmpty, token.utf8.count <= 256
        else { throw .malformedSubject("no activationToken") }
        let body: JSONValue = .object(["activationToken": .string(token)])
        let response = try await ocs.perform(ocs.request(.post, Self.base + "/activate", body: body), step: "server")
        if response.status == 200 || response.status == 202 { return .active }
        return try Self.disabledOrThrow(response)
    }

    /// Removes this device's subscription (always allowed, even with Web Push disabled since).
    ///
    /// - Throws: `.refused`, `.unauthorized`, `.transport`; 200 (none existed) and 202 (removed) succeed.
    public func unregister() async throws(NextcloudPushError) {
        let response = try await ocs.perform(ocs.request(.delete, Self.base), step: "server")
        guard response.status == 200 || response.status == 202 else {
            throw NextcloudOCSClient.refusal(response, step: "server")
        }
    }

    private static func disabledOrThrow(_ response: HTTPResponse) throws(NextcloudPushError) -> NextcloudWebPushState {
        if response.status == 403 { return .disabledByAdministrator }
        throw NextcloudOCSClient.refusal(response, step: "server")
    }
}
