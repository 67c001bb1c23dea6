import Foundation
import Testing
import TidingsCore
import TidingsNet
import TidingsPush
import TidingsSandbox
import TidingsSandboxKit

/// The device's push receiver: what the proxy stand-in delivered, per push token.
actor NextcloudPushInbox {
    private(set) var received: [(token: String, body: Data)] = []
    func append(_ token: String, _ body: Data) { received.append((token, body)) }
}

@Suite(.timeLimit(.minutes(1))) struct NextcloudSandboxEndToEndTests {
    static let schema = SQLiteSchema(
        tables: [NextcloudRaisedNotifications.table],
        migrations: [.init(version: 1, name: "raised") { try NextcloudRaisedNotifications.createTable($0) }])

    /// A client `send` that reaches the sandbox in process, as over the wire.
    static func send(_ sandbox: NextcloudSandboxServer) -> @Sendable (HTTPRequest) async throws -> HTTPResponse {
        { request in
            let target = request.url.path + (request.url.query.map { "?" + $0 } ?? "")
            var headers = request.headers
            // What a client on the wire sends: the sandbox names its URLs after it (Login Flow v2).
            if headers["Host"] == nil, let host = request.url.host {
                headers["Host"] = host + (request.url.port.map { ":\($0)" } ?? "")
            }
            let answer = await sandbox.http.handle(
                SandboxHTTPRequest(
                    method: request.method.rawValue, target: target, headers: headers,
                    body: request.body ?? Data()))
            return HTTPResponse(status: answer.status, headers: answer.headers, body: answer.payload, url: request.url)
        }
    }

    @Test func registerBothStepsReceiveVerifyDecryptThenADeleteWithdraws() async throws {
        let inbox = NextcloudPushInbox()
        let sandbox = try NextcloudSandboxServer { token, body in await inbox.append(token, body) }
        let server = URL(string: "http://sandbox.invalid")!
        let credentials = NextcloudCredentials(user: sandbox.user, appPassword: sandbox.appPassword)

        let connection = NextcloudConnection(serverURL: server, credentials: credentials, send: Self.send(sandbox))
        let state = await connection.connect()
        #expect(
            PushRegistrationChoice.choose(account: .nextcloudSocial, platform: .apple, nextcloud: state)
                == .nextcloudProxy)

        let deviceKey = try NextcloudDeviceKey()
        let registrar = NextcloudProxyRegistrar(serverURL: server, credentials: credentials, send: Self.send(sandbox))
        let pushToken = "http://127.0.0.1:9/device-receiver"
        let registration = try await registrar.register(pushToken: pushToken, deviceKey: deviceKey, proxyServer: server)
        // Both steps ran: the server answered 201 and the proxy stand-in verified and stored the token.
        let paths = sandbox.http.log.entries.map { "\($0.method) \($0.path) \($0.status)" }
        #expect(
            paths == [
                "GET /ocs/v2.php/cloud/capabilities 200", "POST /ocs/v2.php/apps/notifications/api/v2/push 201",
                "POST /devices 200",
            ])

        let nid = await sandbox.createNotification(app: "spreed", subject: "Bob mentioned you")
        let decryptor = NextcloudProxyPushDecryptor(
            deviceKey: deviceKey.privateKey,
            userPublicKey: try TidingsCrypto.RSA.PublicKey(pemRepresentation: registration.userPublicKey))
        let map = NextcloudRaisedNotifications(database: try SQLiteDatabase.inMemory(schema: Self.schema))
        var received = await inbox.received
        #expect(received.count == 1 && received.first?.token == pushToken)
        let opened = try decryptor.open(messageJSON: [UInt8](try #require(received.first?.body)))
        let outcome = try await map.outcome(of: opened, account: "ada")
        #expect(outcome == .raise(nid: nid, app: "spreed", subject: "Bob mentioned you", type: nil, id: nil))
        try await map.record(account: "ada", nid: nid, raisedIdentifier: "raised-1")

        await sandbox.removeNotification(nid)
        received = await inbox.received
        #expect(received.count == 2)
        let withdrawal = try decryptor.open(messageJSON: [UInt8](try #require(received.last?.body)))
        #expect(withdrawal == .delete(nid: nid))
        #expect(try await map.outcome(of: withdrawal, account: "ada") == .withdraw(raisedIdentifiers: ["raised-1"]))

        // Sign-out deletes at both; afterwards nothing is pushed.
        try await registrar.unregister(registration)
        await sandbox.createNotification(app: "spreed", subject: "after sign-out")
        #expect(await inbox.received.count == 2)
    }

    @Test func switchesChangeTheCapabilitiesAndTheChoice() async throws {
        let sandbox = try NextcloudSandboxServer { _, _ in }
        let connection = NextcloudConnection(
            serverURL: URL(string: "http://sandbox.invalid")!,
            credentials: NextcloudCredentials(user: sandbox.user, appPassword: sandbox.appPassword),
            send: Self.send(sandbox))
        await sandbox.setSwitches(push: false, webPush: true)
        let state = await connection.connect()
        #expect(PushRegistrationChoice.choose(account: .nextcloudSocial, platform: .apple, nextcloud: state) == .none)
        #expect(
            PushRegistrationChoice.choose(account: .nextcloudSocial, platform: .unifiedPush, nextcloud: state)
                == .nextcloudWebPush)
        let wrong = NextcloudConnection(
            serverURL: URL(string: "http://sandbox.invalid")!,
            credentials: NextcloudCredentials(user: sandbox.user, appPassword: "wrong"), send: Self.send(sandbox))
        guard case .failed = await wrong.connect() else {
            Issue.record("a wrong app password connected")
            return
        }
    }
}
