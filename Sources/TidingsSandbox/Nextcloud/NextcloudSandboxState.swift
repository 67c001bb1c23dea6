import Foundation
import TidingsCore

/// The Nextcloud sandbox's semantics: one account, its RSA key, the devices registered for proxy
/// pushes (server side) and the push tokens the proxy stand-in holds, the Web Push subscription, and the
/// notifications.
actor NextcloudSandboxState {
    struct Device {
        let publicKey: TidingsCrypto.RSA.PublicKey
        let pushTokenHash: String
        let deviceIdentifier: String
    }

    /// One notification of the notifications app; a Social one also has its Mastodon-compatible side.
    struct Notification {
        let nid: Int64
        let app: String
        let subject: String
        let objectType: String?
        let objectID: String?
        let social: NextcloudSandboxSocialNotification?
    }

    let user: String
    let appPassword: String
    let userKey: TidingsCrypto.RSA.PrivateKey
    var pushEnabled = true
    var webPushEnabled = false
    /// Server side: the app password's device (one per login, as Nextcloud keys it by session token).
    var device: Device?
    /// Proxy side: deviceIdentifier → push token (a URL the proxy delivers to).
    var proxyTokens: [String: String] = [:]
    /// The app password's Web Push subscription (one per login, like the device).
    var webPush: NextcloudSandboxWebPushSubscription?
    var nextNID: Int64 = 1
    var notifications: [Int64: Notification] = [:]
    /// The Social app's Mastodon-compatible notification IDs, counting up as Mastodon's do.
    var nextSocialID: Int64 = 100

    init(user: String, appPassword: String, userKey: TidingsCrypto.RSA.PrivateKey) {
        self.user = user
        self.appPassword = appPassword
        self.userKey = userKey
    }

    func setSwitches(push: Bool?, webPush: Bool?) {
        if let push { pushEnabled = push }
        if let webPush { webPushEnabled = webPush }
    }

    /// `POST …/api/v2/push`: 201 for a new or changed device, 200 for the same one again.
    func registerDevice(pushTokenHash: String, devicePublicKey: String) throws(NextcloudSandboxRefusal) -> (
        status: Int, device: Device
    ) {
        guard pushTokenHash.utf8.count == 128, pushTokenHash.allSatisfy(\.isHexDigit) else {
            throw NextcloudSandboxRefusal("INVALID_PUSHTOKEN_HASH")
        }
        guard let key = try? TidingsCrypto.RSA.PublicKey(pemRepresentation: devicePublicKey) else {
            throw NextcloudSandboxRefusal("INVALID_DEVICE_KEY")
        }
        if let device, device.pushTokenHash == pushTokenHash,
            device.publicKey.pemRepresentation == key.pemRepresentation
        {
            return (200, device)
        }
        let identifier = TidingsCrypto.SecureRandom.bytes(64).map { String(format: "%02x", $0) }.joined()
        let device = Device(publicKey: key, pushTokenHash: pushTokenHash, deviceIdentifier: identifier)
        self.device = device
        return (201, device)
    }

    /// `DELETE …/api/v2/push`: 202 when a device was registered, 200 otherwise.
    func unregisterDevice() -> Int {
        guard device != nil else { return 200 }
        device = nil
        return 202
    }

    func proxyRegister(deviceIdentifier: String, pushToken: String) { proxyTokens[deviceIdentifier] = pushToken }

    func proxyUnregister(deviceIdentifier: String) -> Bool { proxyTokens.removeValue(forKey: deviceIdentifier) != nil }

    /// Whether the proxy stand-in still holds a push token for any device (sign-out must leave none).
    var proxyHoldsTokens: Bool { !proxyTokens.isEmpty }

    /// Whether the server still has a device registered for proxy pushes.
    var hasDevice: Bool { device != nil }

    // MARK: Web Push

    /// `POST …/api/v2/webpush`: 200 when the same subscription is already active (only `appTypes` changes),
    /// else 201 with a fresh activation token that must travel through the push channel.
    func registerWebPush(_ subscription: NextcloudSandboxWebPushSubscription) -> (
        status: Int, subscription: NextcloudSandboxWebPushSubscription
    ) {
        if var current = webPush, current.active, current.sameKeys(as: subscription) {
            current.appTypes = subscription.appTypes
            webPush = current
            return (200, current)
        }
        webPush = subscription
        return (201, subscription)
    }

    /// `POST …/webpush/activate`: 202 activated, 200 already active, 400 wrong token, 404 none.
    func activateWebPush(token: String) -> (status: Int, code: String?) {
        guard var subscription = webPush else { return (404, "NO_PUSH_SUBSCRIPTION") }
        if subscription.active { return (200, nil) }
        guard subscription.activationToken == token else { return (400, "INVALID_ACTIVATION_TOKEN") }
        subscription.active = true
        webPush = subscription
        return (202, nil)
    }

    /// `DELETE …/api/v2/webpush`: 202 removed, 200 none existed.
    func unregisterWebPush() -> Int {
        guard webPush != nil else { return 200 }
        webPush = nil
        return 202
    }

    /// The active Web Push subscription that wants notifications of `app` (`appTypes` filter; a withdrawal,
    /// `app` nil, goes to it whatever the filter).
    func webPushTarget(app: String?) -> NextcloudSandboxWebPushSubscription? {
        guard webPushEnabled, let webPush, webPush.active, app.map(webPush.accepts(app:)) ?? true else { return nil }
        return webPush
    }

    // MARK: Notifications

    func createNotification(app: String, subject: String, objectType: String?, objectID: String?, author: String?)
        -> Notification
    {
        let nid = nextNID
        nextNID += 1
        var social: NextcloudSandboxSocialNotification?
        if app == "social" {
            nextSocialID += 1
            social = NextcloudSandboxSocialNotification(
                id: String(nextSocialID), type: objectType ?? "mention", author: author ?? "bob", text: subject,
                createdAt: Date())
        }
        let notification = Notification(
            nid: nid, app: app, subject: subject, objectType: objectType, objectID: objectID, social: social)
        notifications[nid] = notification
        return notification
    }

    /// Removes the notifications that exist among `nids`; returns those removed.
    func removeNotifications(_ nids: [Int64]) -> [Int64] {
        nids.filter { notifications.removeValue(forKey: $0) != nil }
    }

    func removeAllNotifications() -> Bool {
        defer { notifications.removeAll() }
        return !notifications.isEmpty
    }

    /// The Social app's notifications newer than `sinceID` (Mastodon's `since_id`), newest first.
    func socialNotifications(sinceID: Int64?) -> [NextcloudSandboxSocialNotification] {
        notifications.values.compactMap(\.social)
            .filter { notification in sinceID.map { (Int64(notification.id) ?? 0) > $0 } ?? true }
            .sorted { (Int64($0.id) ?? 0) > (Int64($1.id) ?? 0) }
    }

    /// The device and push token a push goes to, when push is on and the proxy knows the device.
    func pushTarget() -> (device: Device, pushToken: String)? {
        guard pushEnabled, let device, let token = proxyTokens[device.deviceIdentifier] else { return nil }
        return (device, token)
    }
}

/// A 400 with an OCS error code.
struct NextcloudSandboxRefusal: Error {
    let code: String
    init(_ code: String) { self.code = code }
}
