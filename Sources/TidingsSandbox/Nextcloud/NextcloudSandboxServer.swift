import Foundation
import TidingsCore
import TidingsNet
import TidingsPush
import TidingsSandboxKit

/// A Nextcloud server for tests, previews and apps on loopback, on the kit's `SandboxHTTPServer`: the
/// capabilities (switches: proxy push on/off, Web Push enabled/disabled), the notifications app's proxy
/// registration (`/ocs/v2.php/apps/notifications/api/v2/push`), a push-proxy stand-in (`/devices`) on the same
/// origin, the Web Push endpoints (`…/api/v2/webpush`, `…/vapid`, `…/activate`) and the Social app's
/// Mastodon-compatible notifications list (`/index.php/apps/social/api/v1/notifications`), and Login Flow v2
/// (`/index.php/login/v2`, granted by ``grantLogin(_:)`` or the login page's button).
///
/// ``createNotification(app:subject:objectType:objectID:author:)`` and the removals send what a real server
/// sends, with nothing faked between: through the proxy, the subject RSA-encrypted to the device key and signed by
/// the account key, POSTed by the proxy stand-in to the device's push token (a URL, e.g. a
/// ``NextcloudSandboxPushReceiver``); through Web Push, the same JSON encrypted with RFC 8291 `aes128gcm` and
/// VAPID-signed (the Mastodon sandbox's sender) to the subscription's endpoint, once it is activated.
public final class NextcloudSandboxServer: Sendable {
    /// Delivers one proxy push: the push token (a URL) and the JSON body `{"subject", "signature"}`.
    public typealias Deliver = @Sendable (_ pushToken: String, _ body: Data) async -> Void

    /// The HTTP server: `handle(_:)` in process, `serve(port:)` on loopback.
    public let http: SandboxHTTPServer
    /// The account's login name.
    public let user: String
    /// The account's app password (what `Authorization: Basic` must carry).
    public let appPassword: String
    let state: NextcloudSandboxState
    let pusher: NextcloudSandboxPusher
    let login = NextcloudSandboxLogin()

    /// A sandbox with one account.
    ///
    /// - Parameters:
    ///   - user: The account's user name.
    ///   - appPassword: The app password `Authorization: Basic` must carry.
    ///   - faults: Fault switches applied to every request.
    ///   - log: Where every request is recorded.
    ///   - deliver: when given, receives every proxy push in process instead of an HTTP POST to the push token
    ///     (a trailing closure lands here, as before HTTP delivery existed).
    ///   - transport: what the proxy stand-in and the Web Push sender POST through (loopback HTTP by default).
    ///   - onDelivery: sees every HTTP delivery as it is recorded (a CLI prints it).
    /// - Throws: `CryptoError` if the account's RSA key or the VAPID key cannot be generated.
    public init(
        user: String = "ada", appPassword: String = "sandbox-app-password",
        faults: SandboxFaultSwitch = SandboxFaultSwitch(), log: SandboxRequestLog = SandboxRequestLog(),
        deliver: Deliver? = nil,
        transport: @escaping MastodonSandboxPushSender.Transport = { try await HTTPClient().response(for: $0) },
        onDelivery: (@Sendable (MastodonSandboxPushSender.Delivery) -> Void)? = nil
    ) throws {
        self.user = user
        self.appPassword = appPassword
        let state = NextcloudSandboxState(
            user: user, appPassword: appPassword, userKey: try TidingsCrypto.RSA.PrivateKey())
        self.state = state
        let pusher = try NextcloudSandboxPusher(
            state: state, transport: transport, deliver: deliver, onDelivery: onDelivery)
        self.pusher = pusher
        var router = Self.router(state, pusher)
        Self.addLoginRoutes(&router, state, login)
        http = SandboxHTTPServer(router: router, faults: faults, log: log)
    }

    /// Switches proxy push (`devices` in the capabilities, pushes sent) and Web Push (`webpush`).
    public func setSwitches(push: Bool? = nil, webPush: Bool? = nil) async {
        await state.setSwitches(push: push, webPush: webPush)
    }

    /// The VAPID public key (base64url, uncompressed P-256) that signs every Web Push.
    public var vapidPublicKey: String { WebPushBase64URL.encode(pusher.vapidKey.publicKey.x963Representation) }

    /// Every push delivery attempted over HTTP (proxy and Web Push, activations included), in finishing order.
    public var deliveries: [MastodonSandboxPushSender.Delivery] { pusher.sent.items }

    /// The deliveries once `count` have finished, or those finished when `timeout` passes.
    public func deliveries(count: Int, timeout: Duration = .seconds(30)) async -> [MastodonSandboxPushSender.Delivery] {
        await pusher.sent.wait(for: count, timeout: timeout)
    }

    /// Whether the server still holds a proxy device, and whether the proxy stand-in still holds a push token:
    /// after a sign-out both are false.
    public var proxyRegistration: (server: Bool, proxy: Bool) {
        get async { (await state.hasDevice, await state.proxyHoldsTokens) }
    }

    /// Creates a notification and pushes it to the registered device and the active Web Push subscription;
    /// returns its `nid`. A Social notification (`app` `social`) also joins the Social app's notifications list,
    /// and its push names only an object hash (`objectID`, made up when nil), as the Social app's do.
    @discardableResult
    public func createNotification(
        app: String, subject: String, objectType: String? = nil, objectID: String? = nil, author: String? = nil
    ) async -> Int64 {
        await Self.createNotification(
            state, pusher, app: app, subject: subject, objectType: objectType, objectID: objectID, author: author)
    }

    static func createNotification(
        _ state: NextcloudSandboxState, _ pusher: NextcloudSandboxPusher, app: String, subject: String,
        objectType: String?, objectID: String?, author: String?
    ) async -> Int64 {
        let social = app == "social"
        let type = objectType ?? (social ? "mention" : nil)
        let id = objectID ?? (social ? objectHash() : nil)
        let notification = await state.createNotification(
            app: app, subject: subject, objectType: type, objectID: id, author: author)
        var payload: [String: JSONValue] = [
            "nid": .int(notification.nid), "app": .string(app), "subject": .string(subject),
        ]
        if let type { payload["type"] = .string(type) }
        if let id { payload["id"] = .string(id) }
        await pusher.push(payload, app: app)
        return notification.nid
    }

    /// Removes a notification (read elsewhere) and pushes the silent `delete`.
    public func removeNotification(_ nid: Int64) async {
        guard !(await state.removeNotifications([nid])).isEmpty else { return }
        await push(["delete": .bool(true), "nid": .int(nid)], app: nil)
    }

    /// Removes several notifications and pushes one silent `delete-multiple` naming those that existed.
    public func removeNotifications(_ nids: [Int64]) async {
        let removed = await state.removeNotifications(nids)
        guard !removed.isEmpty else { return }
        await push(["delete-multiple": .bool(true), "nids": .array(removed.map { .int($0) })], app: nil)
    }

    /// Removes every notification of the account and pushes the silent `delete-all`.
    public func removeAllNotifications() async {
        guard await state.removeAllNotifications() else { return }
        await push(["delete-all": .bool(true)], app: nil)
    }

    private func push(_ fields: [String: JSONValue], app: String?) async { await pusher.push(fields, app: app) }

    /// A Social object hash: 40 hex digits, like the Social app's object IDs, never a status ID.
    private static func objectHash() -> String {
        TidingsCrypto.SecureRandom.bytes(20).map { String(format: "%02x", $0) }.joined()
    }
}
