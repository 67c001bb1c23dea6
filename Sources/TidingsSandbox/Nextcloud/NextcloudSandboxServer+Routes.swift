import Foundation
import TidingsCore
import TidingsPush
import TidingsSandboxKit

extension NextcloudSandboxServer {
    static let pushPath = "/ocs/v2.php/apps/notifications/api/v2/push"
    static let webPushPath = "/ocs/v2.php/apps/notifications/api/v2/webpush"
    static let socialNotificationsPath = "/index.php/apps/social/api/v1/notifications"

    static func router(_ state: NextcloudSandboxState, _ pusher: NextcloudSandboxPusher) -> SandboxHTTPRouter {
        var router = SandboxHTTPRouter()
        router.add("GET", "/ocs/v2.php/cloud/capabilities") { request in
            guard await authorized(request, state) else { return ocs(status: 401, data: [:]) }
            var push: [JSONValue] = []
            if await state.pushEnabled { push += ["devices", "object-data", "delete"] }
            if await state.webPushEnabled { push.append("webpush") }
            return ocs(
                status: 200, data: ["capabilities": .object(["notifications": .object(["push": .array(push)])])])
        }
        addProxyRoutes(&router, state)
        addWebPushRoutes(&router, state, pusher)
        router.add("GET", socialNotificationsPath) { request in
            guard await authorized(request, state, ocsHeader: false) else { return .text("", status: 401) }
            let since = request.queryValue("since_id").flatMap { Int64($0) }
            let host = request.headers["Host"] ?? "nextcloud.sandbox.invalid"
            let list = await state.socialNotifications(sinceID: since).map { $0.json(host: host) }
            return .json(JSONValue.array(list))
        }
        addControlRoutes(&router, state, pusher)
        return router
    }

    /// The sandbox's own control endpoint (no Nextcloud has it), so a person or a test driving the sandbox from
    /// outside can make a server event: `POST /sandbox/notifications` with JSON `{"app", "subject"}` creates a
    /// notification and pushes it (`{"nid"}` back); `DELETE /sandbox/notifications/:nid` removes one and pushes
    /// the `delete`. Same login as the account.
    private static func addControlRoutes(
        _ router: inout SandboxHTTPRouter, _ state: NextcloudSandboxState, _ pusher: NextcloudSandboxPusher
    ) {
        router.add("POST", "/sandbox/notifications") { request in
            guard await authorized(request, state, ocsHeader: false) else { return .text("", status: 401) }
            guard let body = try? JSONValue(parsing: [UInt8](request.body), maximumDepth: 4),
                let app = body["app"]?.stringValue, !app.isEmpty, app.utf8.count <= 64,
                let subject = body["subject"]?.stringValue, subject.utf8.count <= 4000
            else { return .json(JSONValue.object(["error": "expected {\"app\", \"subject\"}"]), status: 400) }
            let nid = await createNotification(
                state, pusher, app: app, subject: subject, objectType: body["type"]?.stringValue,
                objectID: body["id"]?.stringValue, author: body["author"]?.stringValue)
            return .json(JSONValue.object(["nid": .int(nid)]), status: 201)
        }
        router.add("DELETE", "/sandbox/notifications/:nid") { request in
            guard await authorized(request, state, ocsHeader: false) else { return .text("", status: 401) }
            guard let nid = request.pathParameters["nid"].flatMap({ Int64($0) }),
                !(await state.removeNotifications([nid])).isEmpty
            else { return .text("", status: 404) }
            await pusher.push(["delete": .bool(true), "nid": .int(nid)], app: nil)
            return .text("", status: 204)
        }
    }

    private static func addProxyRoutes(_ router: inout SandboxHTTPRouter, _ state: NextcloudSandboxState) {
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
            guard let fields = proxyFields(request) else { return .text("", status: 400) }
            guard let token = try? JSONValue(parsing: [UInt8](request.body))["pushToken"]?.stringValue else {
                return .text("", status: 400)
            }
            await state.proxyRegister(deviceIdentifier: fields, pushToken: token)
            return .text("", status: 200)
        }
        router.add("DELETE", "/devices") { request in
            guard let identifier = proxyFields(request) else { return .text("", status: 400) }
            return .text("", status: await state.proxyUnregister(deviceIdentifier: identifier) ? 200 : 403)
        }
    }

    /// webpush-v2: the VAPID key, registration (201 and an activation push), activation, removal; every
    /// step but the removal answers 403 `WEBPUSH_DISABLED` while the administrator's switch is off.
    private static func addWebPushRoutes(
        _ router: inout SandboxHTTPRouter, _ state: NextcloudSandboxState, _ pusher: NextcloudSandboxPusher
    ) {
        let disabled = ocs(status: 403, data: ["message": "WEBPUSH_DISABLED"])
        router.add("GET", webPushPath + "/vapid") { request in
            guard await authorized(request, state) else { return ocs(status: 401, data: [:]) }
            guard await state.webPushEnabled else { return disabled }
            return ocs(
                status: 200,
                data: ["vapid": .string(WebPushBase64URL.encode(pusher.vapidKey.publicKey.x963Representation))])
        }
        router.add("POST", webPushPath) { request in
            guard await authorized(request, state) else { return ocs(status: 401, data: [:]) }
            guard await state.webPushEnabled else { return disabled }
            guard let body = try? JSONValue(parsing: [UInt8](request.body), maximumDepth: 4) else {
                return ocs(status: 400, data: ["message": "INVALID_ENDPOINT"])
            }
            let candidate: NextcloudSandboxWebPushSubscription
            do throws(NextcloudSandboxRefusal) {
                candidate = try NextcloudSandboxWebPushSubscription(body: body)
            } catch {
                return ocs(status: 400, data: ["message": .string(error.code)])
            }
            let (status, subscription) = await state.registerWebPush(candidate)
            if status == 201 { pusher.sendActivation(subscription) }
            return ocs(status: status, data: [:])
        }
        router.add("POST", webPushPath + "/activate") { request in
            guard await authorized(request, state) else { return ocs(status: 401, data: [:]) }
            guard await state.webPushEnabled else { return disabled }
            let token = (try? JSONValue(parsing: [UInt8](request.body), maximumDepth: 4))?["activationToken"]
            let (status, code) = await state.activateWebPush(token: token?.stringValue ?? "")
            return ocs(status: status, data: code.map { ["message": .string($0)] } ?? [:])
        }
        router.add("DELETE", webPushPath) { request in
            guard await authorized(request, state) else { return ocs(status: 401, data: [:]) }
            return ocs(status: await state.unregisterWebPush(), data: [:])
        }
    }

    /// The proxy request's device identifier when its signature verifies with the user key given.
    private static func proxyFields(_ request: SandboxHTTPRequest) -> String? {
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

    private static func authorized(
        _ request: SandboxHTTPRequest, _ state: NextcloudSandboxState, ocsHeader: Bool = true
    ) async -> Bool {
        let expected = "Basic " + Data("\(state.user):\(state.appPassword)".utf8).base64EncodedString()
        return request.headers["Authorization"] == expected
            && (!ocsHeader || request.headers["OCS-APIRequest"] == "true")
    }

    private static func ocs(status: Int, data: [String: JSONValue]) -> SandboxHTTPResponse {
        let body: JSONValue = .object([
            "ocs": .object([
                "meta": .object([
                    "status": .string(status < 300 ? "ok" : "failure"), "statuscode": .int(Int64(status)),
                ]),
                "data": .object(data),
            ])
        ])
        var response = SandboxHTTPResponse(status: status, body: body.jsonData())
        response.headers["Content-Type"] = "application/json"
        return response
    }
}
