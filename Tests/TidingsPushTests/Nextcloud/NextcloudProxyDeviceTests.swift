import Foundation
import Testing
import TidingsCore
import TidingsNet
import TidingsPush
import TidingsSandbox
import TidingsSandboxKit

/// The device key, the proxy registration and the connection state of a Nextcloud account survive a relaunch
/// (a new `SQLiteDatabase` on the same file and a new `NextcloudProxyDevice`), re-register only when something
/// they were made for changed, and are erased at sign-out, at the server, the proxy and locally.
@Suite(.timeLimit(.minutes(1))) struct NextcloudProxyDeviceTests {
    static let account = "ada@nextcloud.sandbox"
    static let server = URL(string: "http://sandbox.invalid")!

    /// A push store file in a fresh folder, the sandbox (in process) and the app's cipher.
    struct Fixture {
        let folder: URL
        let path: String
        let sandbox: NextcloudSandboxServer
        let faults = SandboxFaultSwitch()
        let inbox = NextcloudPushInbox()
        let cipher: ValueCipher

        init() throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("nc-device-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            path = folder.appendingPathComponent("push.sqlite").path
            let inbox = self.inbox
            sandbox = try NextcloudSandboxServer(faults: faults) { token, body in await inbox.append(token, body) }
            cipher = try ValueCipher(key: TidingsCrypto.SymmetricKey(bytes: TidingsCrypto.SecureRandom.bytes(32)))
        }

        /// What an app does at launch: opens the store and builds the account's device.
        func launch(cipher: ValueCipher?) async throws -> (SQLiteDatabase, NextcloudProxyDevice) {
            let database = try await SQLiteDatabase.open(path: path, schema: PushStoreSchema.schema)
            let registrar = NextcloudProxyRegistrar(
                serverURL: NextcloudProxyDeviceTests.server,
                credentials: NextcloudCredentials(user: sandbox.user, appPassword: sandbox.appPassword),
                send: NextcloudSandboxEndToEndTests.send(sandbox))
            return (
                database,
                NextcloudProxyDevice(
                    account: NextcloudProxyDeviceTests.account, database: database, cipher: cipher,
                    registrar: registrar)
            )
        }

        var requests: [String] { sandbox.http.log.entries.map { "\($0.method) \($0.path) \($0.status)" } }

        func remove() { try? FileManager.default.removeItem(at: folder) }
    }

    static let registered = [
        "POST /ocs/v2.php/apps/notifications/api/v2/push 201", "POST /devices 200",
    ]

    @Test func aRelaunchKeepsKeyAndRegistrationAndSendsNothing() async throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let (first, device) = try await fixture.launch(cipher: fixture.cipher)
        let status = await device.reconcile(pushToken: "token-1", proxyServer: Self.server)
        guard case .active(let registration) = status else {
            Issue.record("not registered: \(status)")
            return
        }
        #expect(fixture.requests == Self.registered)
        try await device.saveConnection(.connected(NextcloudPushCapabilities(push: ["devices", "delete"])))
        let keyPEM = try await device.deviceKey().publicKeyPEM
        first.close()

        // At rest: the file is the owner's alone and the private key is sealed, not PEM.
        let mode = try FileManager.default.attributesOfItem(atPath: fixture.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let raw = try await SQLiteDatabase.open(path: fixture.path, schema: PushStoreSchema.schema)
        let stored = try await raw.read { db in
            try db.fetchOne([UInt8].self, "SELECT private_key FROM push_nextcloud_devices", [])
        }
        raw.close()
        #expect(stored.map { String(decoding: $0, as: UTF8.self).contains("PRIVATE KEY") } == false)

        // Relaunch: the same registration and key, the connection as it was, no request at all.
        let (second, relaunched) = try await fixture.launch(cipher: fixture.cipher)
        defer { second.close() }
        #expect(await relaunched.reconcile(pushToken: "token-1", proxyServer: Self.server) == .active(registration))
        #expect(fixture.requests == Self.registered)
        #expect(try await relaunched.deviceKey().publicKeyPEM == keyPEM)
        #expect(
            try await relaunched.savedConnection()
                == .connected(NextcloudPushCapabilities(push: ["devices", "delete"])))

        // And the relaunched device opens what the server pushes to the registration it kept.
        let nid = await fixture.sandbox.createNotification(app: "spreed", subject: "Bob called")
        let push = try #require(await fixture.inbox.received.last)
        #expect(push.token == "token-1")
        let decryptor = try #require(try await relaunched.decryptor())
        guard
            case .notification(nid, "spreed", "Bob called", _, _) = try decryptor.open(messageJSON: [UInt8](push.body))
        else {
            Issue.record("the relaunched device did not open the push")
            return
        }
    }

    @Test func aChangedPushTokenOrProxyReRegisters() async throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let (database, device) = try await fixture.launch(cipher: fixture.cipher)
        defer { database.close() }
        guard case .active(let first) = await device.reconcile(pushToken: "token-1", proxyServer: Self.server) else {
            Issue.record("not registered")
            return
        }
        guard case .active(let second) = await device.reconcile(pushToken: "token-2", proxyServer: Self.server) else {
            Issue.record("not re-registered")
            return
        }
        #expect(fixture.requests == Self.registered + Self.registered)
        #expect(second.deviceIdentifier != first.deviceIdentifier)
        await fixture.sandbox.createNotification(app: "spreed", subject: "to the new token")
        #expect(await fixture.inbox.received.last?.token == "token-2")
        // Same token again: nothing; another proxy: registered again.
        _ = await device.reconcile(pushToken: "token-2", proxyServer: Self.server)
        #expect(fixture.requests.count == 4)
        let otherProxy = Self.server.appendingPathComponent("proxy2")
        _ = await device.reconcile(pushToken: "token-2", proxyServer: otherProxy)
        #expect(fixture.requests.count == 5)
        #expect(try await device.registration()?.proxyServer == otherProxy)
    }

    @Test func aFailedReRegistrationKeepsTheOldOneAndSaysSo() async throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let (database, device) = try await fixture.launch(cipher: fixture.cipher)
        defer { database.close() }
        guard case .active(let kept) = await device.reconcile(pushToken: "token-1", proxyServer: Self.server) else {
            Issue.record("not registered")
            return
        }
        fixture.faults.add(.status(503), on: .path("/ocs/v2.php/apps/notifications/api/v2/push"), times: 1)
        let failed = await device.reconcile(pushToken: "token-2", proxyServer: Self.server)
        guard case .failed(let reason) = failed else {
            Issue.record("a 503 was taken as registered: \(failed)")
            return
        }
        #expect(reason.contains("503") && !reason.contains(fixture.sandbox.appPassword))
        #expect(!failed.isActive)
        #expect(try await device.registration() == kept, "the old registration is still what the server pushes to")
        #expect(try await device.lastError() == reason)
        // The next launch retries and succeeds.
        guard case .active = await device.reconcile(pushToken: "token-2", proxyServer: Self.server) else {
            Issue.record("the retry did not register")
            return
        }
        #expect(try await device.lastError() == nil)
    }

    @Test func signOutErasesAtTheServerTheProxyAndLocally() async throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let (database, device) = try await fixture.launch(cipher: fixture.cipher)
        defer { database.close() }
        guard case .active = await device.reconcile(pushToken: "token-1", proxyServer: Self.server) else {
            Issue.record("not registered")
            return
        }
        let oldKey = try await device.deviceKey().publicKeyPEM
        try await device.withdrawRegistration()
        let left = await fixture.sandbox.proxyRegistration
        #expect(!left.server && !left.proxy)
        #expect(try await device.registration() == nil)
        #expect(try await device.savedConnection() == .disconnected)
        let rows = try await database.read { db in
            try db.fetchOne(Int64.self, "SELECT count(*) FROM push_nextcloud_devices", [])
        }
        #expect(rows == 0)
        // A later sign-in starts over with a new key.
        #expect(try await device.deviceKey().publicKeyPEM != oldKey)
    }

    @Test func aSealedKeyIsNotReadWithoutTheCipher() async throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let (first, sealed) = try await fixture.launch(cipher: fixture.cipher)
        _ = try await sealed.deviceKey()
        first.close()
        let (second, withoutCipher) = try await fixture.launch(cipher: nil)
        defer { second.close() }
        await #expect(throws: NextcloudPushError.keyUnavailable) { try await withoutCipher.deviceKey() }
        #expect(
            await withoutCipher.reconcile(pushToken: "t", proxyServer: Self.server).isActive == false,
            "no new key is made behind the person's back")
        #expect(fixture.requests.isEmpty)
    }
}
