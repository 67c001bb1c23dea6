import Foundation
import Testing
import TidingsCore
import TidingsNet
import TidingsPush

/// A Nextcloud Web Push (UnifiedPush) subscription kept in the push store like the proxy's device: its keys
/// sealed, what it was registered for and where it stands, so a relaunch sends nothing, still opens the pushes,
/// and still knows whether it waits for its activation.
@Suite(.timeLimit(.minutes(1))) struct NextcloudWebPushDeviceTests {
    static let account = "ada@cloud.example.org"
    static let endpoint = URL(string: "https://up.example.org/push/abc?token=1")!
    static let base = NextcloudWebPushRegistrarTests.base
    static let created = (201, #"{"ocs":{"meta":{},"data":[]}}"#)

    struct Fixture {
        let folder: URL
        let path: String
        let cipher: ValueCipher
        let server: NextcloudScriptedServer

        init(_ script: [String: [(Int, String)]]) throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("nc-webpush-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            path = folder.appendingPathComponent("push.sqlite").path
            cipher = try ValueCipher(key: .random())
            server = NextcloudScriptedServer(script)
        }

        /// What an app does at launch: opens the store and builds the account's Web Push device.
        func launch(now: @escaping @Sendable () -> Date = { Date() }) async throws -> (
            SQLiteDatabase, NextcloudWebPushDevice
        ) {
            let database = try await SQLiteDatabase.open(path: path, schema: PushStoreSchema.schema)
            let device = NextcloudWebPushDevice(
                account: NextcloudWebPushDeviceTests.account, database: database, cipher: cipher,
                registrar: NextcloudWebPushRegistrarTests.registrar(server), now: now)
            return (database, device)
        }

        var requests: [String] {
            get async {
                await server.requests.map { "\($0.method.rawValue) \($0.url.host ?? "")\($0.url.path)" }
            }
        }

        func remove() { try? FileManager.default.removeItem(at: folder) }
    }

    /// What the server's push service delivers: `json` encrypted for the subscription, as a server does.
    static func push(_ json: String, to keys: WebPushSubscriptionKeys) throws -> IncomingWebPush {
        let message = try WebPushEncryptor.encrypt(
            Array(json.utf8), receiverPublicKey: keys.publicKey, authSecret: keys.authSecret, encoding: .aes128gcm)
        return IncomingWebPush(endpoint: endpoint, body: message.body, contentEncoding: "aes128gcm")
    }

    @Test func aRelaunchKeepsKeysSubscriptionAndActivationAndSendsNothing() async throws {
        let fixture = try Fixture([
            "POST \(Self.base)": [Self.created], "POST \(Self.base)/activate": [(202, "{}")],
        ])
        defer { fixture.remove() }
        let (database, device) = try await fixture.launch()
        #expect(await device.reconcile(endpoint: Self.endpoint, appTypes: "all,-spreed") == .awaitingActivation)
        let keys = try await device.keys()
        let registration = try JSONValue(parsing: [UInt8](try #require(await fixture.server.requests.first?.body)))
        #expect(registration["uaPublicKey"]?.stringValue == keys.base64URLPublicKey)
        #expect(registration["auth"]?.stringValue == keys.base64URLAuthSecret)
        #expect(registration["endpoint"]?.stringValue == Self.endpoint.absoluteString)

        // The app was killed before the activation push came: the relaunch knows it still waits, sends nothing,
        // and the push that then arrives activates the subscription with the keys it kept.
        database.close()
        let (again, relaunched) = try await fixture.launch()
        defer { again.close() }
        #expect(try await relaunched.status() == .awaitingActivation)
        #expect(await relaunched.reconcile(endpoint: Self.endpoint, appTypes: "all,-spreed") == .awaitingActivation)
        #expect(await fixture.server.requests.count == 1, "the relaunch sent nothing")
        let activation = try await relaunched.open(try Self.push(#"{"activationToken":"tok-1"}"#, to: keys))
        #expect(activation == .activated(.active))
        #expect(try await relaunched.status() == .active)
        let sent = try JSONValue(parsing: [UInt8](try #require(await fixture.server.requests.last?.body)))
        #expect(sent["activationToken"]?.stringValue == "tok-1")

        // A notification pushed to the subscription opens to its subject.
        let opened = try await relaunched.open(
            try Self.push(
                #"{"nid":7,"app":"social","subject":"Bob mentioned you","type":"mention","id":"0a1b"}"#, to: keys))
        #expect(
            opened
                == .subject(
                    .notification(nid: 7, app: "social", subject: "Bob mentioned you", type: "mention", id: "0a1b")))
        #expect(await relaunched.reconcile(endpoint: Self.endpoint, appTypes: "all,-spreed") == .active)
        #expect(await fixture.requests == ["POST \(Self.base)", "POST \(Self.base)/activate"])
    }

    @Test func aNewEndpointRegistersAgainWithTheSameKeysAndAFailureKeepsTheOldOne() async throws {
        let fixture = try Fixture([
            "POST \(Self.base)": [(200, "{}"), (503, "{}"), (200, "{}")],
            "DELETE \(Self.base)": [(202, "{}")],
        ])
        defer { fixture.remove() }
        let (database, device) = try await fixture.launch()
        defer { database.close() }
        #expect(await device.reconcile(endpoint: Self.endpoint) == .active)
        // The distributor renewed the endpoint; the server is down: the old subscription stays, the error is said.
        let renewed = URL(string: "https://up.example.org/push/def")!
        guard case .failed(let reason) = await device.reconcile(endpoint: renewed) else {
            Issue.record("a 503 was not reported")
            return
        }
        #expect(reason.contains("503"))
        #expect(try await device.status() == .active, "the server still pushes to the old endpoint")
        let keys = try await device.keys()
        #expect(try await device.open(try Self.push(#"{"delete-all":true}"#, to: keys)) == .subject(.deleteAll))
        // The next reconcile retries, with the same keys.
        #expect(await device.reconcile(endpoint: renewed) == .active)
        let bodies = await fixture.server.requests.compactMap { $0.body }.map { try? JSONValue(parsing: [UInt8]($0)) }
        #expect(Set(bodies.map { $0?["uaPublicKey"]?.stringValue }) == [keys.base64URLPublicKey])
        #expect(bodies.last??["endpoint"]?.stringValue == renewed.absoluteString)

        // Sign-out: the server is told, and the keys are gone (a push to them no longer opens).
        try await device.withdrawRegistration()
        #expect(try await device.status() == nil)
        await #expect(throws: NextcloudPushError.notRegistered) {
            try await device.open(try Self.push(#"{"delete-all":true}"#, to: keys))
        }
        #expect(await fixture.requests.last == "DELETE \(Self.base)")
    }

    @Test func webPushDisabledByTheAdministratorIsAskedAgainAtTheNextLaunch() async throws {
        let disabled = (403, #"{"ocs":{"meta":{"message":"WEBPUSH_DISABLED"},"data":[]}}"#)
        let fixture = try Fixture(["POST \(Self.base)": [disabled, Self.created]])
        defer { fixture.remove() }
        let (database, device) = try await fixture.launch()
        defer { database.close() }
        #expect(await device.reconcile(endpoint: Self.endpoint) == .disabledByAdministrator)
        #expect(try await device.status() == .disabledByAdministrator)
        #expect(await device.reconcile(endpoint: Self.endpoint) == .awaitingActivation)
    }

    @Test func anActivationThatNeverCameIsAskedForAgainAfterTheActivationPatience() async throws {
        let fixture = try Fixture(["POST \(Self.base)": [Self.created, Self.created]])
        defer { fixture.remove() }
        let now = LockedState(Date(timeIntervalSince1970: 1_800_000_000))
        let (database, device) = try await fixture.launch { now.withLock { $0 } }
        defer { database.close() }
        #expect(await device.reconcile(endpoint: Self.endpoint) == .awaitingActivation)
        now.withLock { $0 += NextcloudWebPushDevice.activationPatience - 1 }
        #expect(await device.reconcile(endpoint: Self.endpoint) == .awaitingActivation)
        #expect(await fixture.server.requests.count == 1, "still within the patience: nothing sent")
        now.withLock { $0 += 2 }
        #expect(await device.reconcile(endpoint: Self.endpoint) == .awaitingActivation)
        #expect(await fixture.server.requests.count == 2, "the lost activation push is asked for again")
    }

    @Test func aPushThatDoesNotOpenIsATypedErrorAndChangesNothing() async throws {
        let fixture = try Fixture(["POST \(Self.base)": [Self.created]])
        defer { fixture.remove() }
        let (database, device) = try await fixture.launch()
        defer { database.close() }
        #expect(await device.reconcile(endpoint: Self.endpoint) == .awaitingActivation)
        let other = try WebPushSubscriptionKeys.generate()
        await #expect(throws: WebPushError.self) {
            try await device.open(try Self.push(#"{"activationToken":"tok-1"}"#, to: other))
        }
        let keys = try await device.keys()
        await #expect(throws: NextcloudPushError.malformedSubject) {
            try await device.open(try Self.push(#"{"something":"else"}"#, to: keys))
        }
        #expect(try await device.status() == .awaitingActivation)
        #expect(await fixture.server.requests.count == 1)
    }
}
