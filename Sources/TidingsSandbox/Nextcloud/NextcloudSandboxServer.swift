import Foundation
import TidingsCore
import TidingsNet
import TidingsSandboxKit

/// A Nextcloud server for tests, previews and apps on loopback, on the kit's `SandboxHTTPServer`: the
/// capabilities (switches: proxy push on/off, Web Push enabled/disabled), the notifications app's proxy
/// registration (`/ocs/v2.php/apps/notifications/api/v2/push`) and a push-proxy stand-in (`/devices`) on
/// the same origin. ``createNotification(app:subject:)`` and ``removeNotification(_:)`` send what a real
/// server sends: the subject RSA-encrypted to the device key, signed by the account key, delivered by the
/// proxy to the device's push token, which here is a URL (a loopback receiver) given to the `deliver` closure.
///
/// Not yet: the Web Push endpoints (`…/api/v2/webpush…`) answer 404.
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
    private let deliver: Deliver

    /// A sandbox with one account; `deliver` receives every proxy push.
    ///
    /// - Throws: `CryptoError` if the account key cannot be generated.
    public init(
        user: String = "ada", appPassword: String = "sandbox-app-password",
        faults: SandboxFaultSwitch = SandboxFaultSwitch(), log: SandboxRequestLog = SandboxRequestLog(),
        deliver: @escaping Deliver
    ) throws {
        self.user = user
        self.appPassword = appPassword
        self.deliver = deliver
        let state = NextcloudSandboxState(
            user: user, appPassword: appPassword, userKey: try TidingsCrypto.RSA.PrivateKey())
        self.state = state
        http = SandboxHTTPServer(router: Self.router(state), faults: faults, log: log)
    }

    /// Switches proxy push (`devices` in the capabilities, pushes sent) and Web Push (`webpush`).
    public func setSwitches(push: Bool? = nil, webPush: Bool? = nil) async {
        await state.setSwitches(push: push, webPush: webPush)
    }

    /// Creates a notification and pushes it to the registered device; returns its `nid`.
    @discardableResult
    public func createNotification(app: String, subject: String) async -> Int64 {
        let nid = await state.createNotification(app: app, subject: subject)
        await push(.object(["nid": .int(nid), "app": .string(app), "subject": .string(subject)]))
        return nid
    }

    /// Removes a notification (read elsewhere) and pushes the silent `delete`.
    public func removeNotification(_ nid: Int64) async {
        guard await state.removeNotification(nid) else { return }
        await push(.object(["delete": .bool(true), "nid": .int(nid)]))
    }

    /// What a server does per push: encrypt to the device key (PKCS#1 v1.5, as Nextcloud does), sign
    /// the encrypted bytes with the account key (SHA-512), hand both to the proxy, which forwards them.
    private func push(_ subject: JSONValue) async {
        guard let target = await state.pushTarget(),
            let block = try? target.device.publicKey.encrypt(Array(subject.jsonData()), padding: .pkcs1v15),
            let signature = try? state.userKey.signatureSHA512PKCS1(for: block)
        else { return }
        let body: JSONValue = .object([
            "subject": .string(Data(block).base64EncodedString()),
            "signature": .string(Data(signature).base64EncodedString()),
        ])
        await deliver(target.pushToken, body.jsonData())
    }

    // MARK: Routes

    private static let pushPath = "/ocs/v2.php/apps/notifications/api/v2/push"

    private static func router(_ state: NextcloudSandboxState) -> SandboxHTTPRouter {
        var router = SandboxHTTPRouter()
        router.add("GET", "/ocs/v2.php/cloud/capabilities") { request in
            guard await authorized(request, state) else { return ocs(status: 401, data: [:]) }
            var push: [JSONValue] = []
            if await state.pushEnabled { push += ["devices", "object-data", "delete"] }
            if await state.webPushEnabled { push.append("webpush") }
            return ocs(
                status: 200, data: ["capabilities": .object(["notifications": .object(["push": .array(push)])])])
        }
        router.add("POST", pushPath) { request in
            guard await authorized(request, state) else { return ocs(status: 401, data: [:]) }
            guard let body = try? JSONValue(parsing: [UInt8](request.body)),
                let hash = body["pushTokenHash"]?.stringValue, let key = body["devicePublicKey"]?.stringValue,
                body["proxyServer"]?.stringValue != nil
            else { return ocs(status: 400, data: ["message": "INVALID_DEVICE_KEY"]) }
            do {
                let (status, device) = try await state.registerDevice(pushTokenHash: hash, devicePublicKey: key)
                let signature = try state.userKey.signatureSHA512PKCS1(for: Array(device.deviceIdentifier.utf8))
                return ocs(
                    status: status,
                    data: [
                        "publicKey": .string(state.userKey.publicKey.pemRepresentation),
                        "deviceIdentifier": .string(device.deviceIdentifier),
                        "signature": .string(Data(signature).base64EncodedString()),
                    ])
            } catch let refusal as NextcloudSandboxRefusal {
                return ocs(status: 400, data: ["message": .string(refusal.code)])
            } catch {
                return ocs(status: 500, data: [:])
            }
        }
        router.add("DELETE", pushPath) { request in
            guard await authorized(request, state) else { return ocs(status: 401, data: [:]) }
            return ocs(status: await state.unregisterDevice(), data: [:])
        }
        // The push-proxy stand-in: it checks the device identifier's signature by the user key, as the
        // real proxy does, and never sees the Nextcloud login.
        router.add("POST", "/devices") { request in
            guard let fields = proxyFields(request, state) else { return .text("", status: 400) }
            guard let token = try? JSONValue(parsing: [UInt8](request.body))["pushToken"]?.stringValue else {
                return .text("", status: 400)
            }
            await state.proxyRegister(deviceIdentifier: fields, pushToken: token)
            return .text("", status: 200)
        }
        router.add("DELETE", "/devices") { request in
            guard let identifier = proxyFields(request, state) else { return .text("", status: 400) }
            return .text("", status: await state.proxyUnregister(deviceIdentifier: identifier) ? 200 : 403)
        }
        return router
    }

    /// The proxy request's device identifier when its signature verifies with the user key given.
    private static func proxyFields(_ request: SandboxHTTPRequest, _ state: NextcloudSandboxState) -> String? {
        guard let body = try? JSONValue(parsing: [UInt8](request.body)),
            let identifier = body["deviceIdentifier"]?.stringValue,
            let signatureText = body["deviceIdentifierSignature"]?.stringValue,
            let keyText = body["userPublicKey"]?.stringValue,
            let key = try? TidingsCrypto.RSA.PublicKey(pemRepresentation: keyText),
            let signature = Data(base64Encoded: signatureText),
            key.isValidSignatureSHA512PKCS1([UInt8](signature), for: Array(identifier.utf8))
        else { return nil }
        return identifier
    }

    private static func authorized(_ request: SandboxHTTPRequest, _ state: NextcloudSandboxState) async -> Bool {
        let expected = "Basic " + Data("\(state.user):\(state.appPassword)".utf8).base64EncodedString()
        return request.headers["Authorization"] == expected && request.headers["OCS-APIRequest"] == "true"
    }

    private static func ocs(status: Int, data: [String: JSONValue]) -> SandboxHTTPResponse {
        let body: JSONValue = .object([
            "ocs": .object([
                "meta": .object(["status": .string(status < 300 ? "ok" : "failure"), "statuscode": .int(Int64(status))]
                ),
                "data": .object(data),
            ])
        ])
        var response = SandboxHTTPResponse(status: status, body: body.jsonData())
        response.headers["Content-Type"] = "application/json"
        return response
    }
}
