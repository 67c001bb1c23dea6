import Foundation
import TidingsCore
import TidingsPush

/// One Nextcloud Web Push subscription as the sandbox server holds it (webpush-v2): the push endpoint, the
/// subscriber's keys, the `appTypes` filter and the activation handshake's token.
struct NextcloudSandboxWebPushSubscription: Sendable {
    let endpoint: URL
    let publicKey: [UInt8]
    let authSecret: [UInt8]
    var appTypes: [String]
    let activationToken: String
    var active = false

    /// Validates `POST …/webpush`'s body as the server does; the thrown code is the OCS `message`.
    init(body: JSONValue) throws(NextcloudSandboxRefusal) {
        // A real server wants https; the sandbox delivers to loopback receivers, which speak plain HTTP.
        guard let text = body["endpoint"]?.stringValue, text.utf8.count <= 765, let endpoint = URL(string: text),
            ["http", "https"].contains(endpoint.scheme ?? ""), endpoint.host != nil
        else { throw NextcloudSandboxRefusal("INVALID_ENDPOINT") }
        guard let keyText = body["uaPublicKey"]?.stringValue, let key = try? WebPushBase64URL.decode(keyText),
            (try? TidingsCrypto.P256.KeyAgreement.PublicKey(x963Representation: key)) != nil
        else { throw NextcloudSandboxRefusal("INVALID_P256DH") }
        guard let authText = body["auth"]?.stringValue, let auth = try? WebPushBase64URL.decode(authText),
            auth.count == 16
        else { throw NextcloudSandboxRefusal("INVALID_AUTH") }
        let appTypes = body["appTypes"]?.stringValue ?? "all"
        guard appTypes.utf8.count <= 256 else { throw NextcloudSandboxRefusal("TOO_MANY_APP_TYPES") }
        self.endpoint = endpoint
        publicKey = key
        authSecret = auth
        self.appTypes = appTypes.split(separator: ",").map(String.init)
        activationToken = UUID().uuidString.lowercased()
    }

    func sameKeys(as other: Self) -> Bool {
        endpoint == other.endpoint && publicKey == other.publicKey && authSecret == other.authSecret
    }

    /// The protocol's filter: `app` is delivered when listed, or when `all` is listed without `-app`.
    func accepts(app: String) -> Bool {
        appTypes.contains(app) || (appTypes.contains("all") && !appTypes.contains("-" + app))
    }

    /// The subscription in the shape the Web Push sender takes (always RFC 8291 `aes128gcm`).
    var senderSubscription: MastodonSandboxPushSubscriptions.Subscription {
        .init(
            id: "nextcloud", endpoint: endpoint, publicKey: publicKey, authSecret: authSecret, standard: true,
            alerts: [], policy: "all")
    }
}

/// A notification of the Nextcloud Social app as its Mastodon-compatible API lists it. The push for it names
/// only an object hash, so the client polls this list from its marker.
struct NextcloudSandboxSocialNotification: Sendable {
    let id: String
    let type: String
    let author: String
    let text: String
    let createdAt: Date

    func json(host: String) -> JSONValue {
        let stamp = ISO8601DateFormatter().string(from: createdAt)
        return .object([
            "id": .string(id), "type": .string(type), "created_at": .string(stamp),
            "account": .object([
                "id": .string("acct-\(author)"), "username": .string(author), "acct": .string("\(author)@\(host)"),
                "display_name": .string(author.capitalized),
            ]),
            "status": .object([
                "id": .string("status-\(id)"), "created_at": .string(stamp), "visibility": .string("public"),
                "content": .string("<p>\(Self.escaped(text))</p>"), "spoiler_text": .string(""),
                "account": .object(["id": .string("acct-\(author)"), "username": .string(author)]),
            ]),
        ])
    }

    private static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}
