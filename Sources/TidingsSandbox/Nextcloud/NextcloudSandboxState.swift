import Foundation
import TidingsCore

/// The Nextcloud sandbox's semantics: one account, its RSA key, the devices registered for proxy
/// pushes (server side) and the push tokens the proxy stand-in holds, and the notifications.
actor NextcloudSandboxState {
    struct Device {
        let publicKey: TidingsCrypto.RSA.PublicKey
        let pushTokenHash: String
        let deviceIdentifier: String
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
    var nextNID: Int64 = 1
    var notifications: [Int64: (app: String, subject: String)] = [:]

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

    func createNotification(app: String, subject: String) -> Int64 {
        let nid = nextNID
        nextNID += 1
        notifications[nid] = (app, subject)
        return nid
    }

    func removeNotification(_ nid: Int64) -> Bool { notifications.removeValue(forKey: nid) != nil }

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
