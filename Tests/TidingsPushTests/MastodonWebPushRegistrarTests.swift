import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox
import TidingsSandboxKit

@testable import TidingsPush

/// The Mastodon Web Push subscription against the Mastodon sandbox in process: the form Mastodon expects,
/// reconcile that sends nothing twice, keys sealed in the durable store, failures that keep push alive, and
/// sign-out.
@Suite(.timeLimit(.minutes(1))) struct MastodonWebPushRegistrarTests {
    let sandbox = MastodonSandboxServer()
    let faults = SandboxFaultSwitch()
    let token = "push-token-1"
    let endpoint = URL(string: "https://push.example/send/abc")!

    private func client() async -> MastodonPushSubscriptionClient {
        await sandbox.addAccount(username: "alice", token: token)
        let api = MastodonAPIClient(
            server: URL(string: "https://sandbox.invalid")!, accountKey: "alice@sandbox",
            authorization: MastodonAuthorization(token: token),
            transport: MastodonSandboxTransport(server: sandbox.httpServer(faults: faults)))
        return MastodonPushSubscriptionClient(api: api)
    }

    private func registration(database: SQLiteDatabase, cipher: ValueCipher) async -> MastodonWebPushRegistrar {
        MastodonWebPushRegistrar(account: "alice@sandbox", database: database, cipher: cipher, client: await client())
    }

    private static func memoryStore() throws -> SQLiteDatabase {
        try SQLiteDatabase.inMemory(schema: PushStoreSchema.schema)
    }

    @Test func reconcileSubscribesWithTheKeysAlertsPolicyAndStandard() async throws {
        let cipher = try ValueCipher(key: .random())
        let registration = await registration(database: try Self.memoryStore(), cipher: cipher)
        let alerts = MastodonPushAlerts(categories: ["reply", "favourite", "moderation_warning"])
        #expect(alerts.enabled == ["mention", "favourite"])
        let status = await registration.reconcile(endpoint: endpoint, alerts: alerts, policy: .followed)
        guard case .active(let subscription) = status else {
            Issue.record("not active: \(status)")
            return
        }
        let keys = try await registration.keys()
        let stored = try #require(sandbox.pushSubscriptions.subscription(token: token))
        #expect(stored.publicKey == keys.publicKey)
        #expect(stored.authSecret == keys.authSecret)
        #expect(stored.endpoint == endpoint)
        #expect(stored.standard)
        #expect(stored.alerts == ["mention", "favourite"])
        #expect(stored.policy == "followed")
        #expect(subscription.alerts == alerts)
        #expect(subscription.standard)
        #expect(subscription.serverKey.count == 87)
        #expect(sandbox.pushSubscriptions.requestLog == ["GET", "POST"])
        #expect(status.tierRegistration == .active)
    }

    @Test func reconcileIsIdempotentAndSendsOnlyWhatChanged() async throws {
        let registration = await registration(database: try Self.memoryStore(), cipher: try ValueCipher(key: .random()))
        _ = await registration.reconcile(endpoint: endpoint, alerts: .personal, policy: .all)
        _ = await registration.reconcile(endpoint: endpoint, alerts: .personal, policy: .all)
        #expect(sandbox.pushSubscriptions.requestLog == ["GET", "POST", "GET"])
        // A category switch: PUT, same keys and endpoint.
        let fewer = MastodonPushAlerts(enabled: ["mention"])
        #expect(await registration.change(alerts: fewer, policy: .all) != .none)
        #expect(sandbox.pushSubscriptions.subscription(token: token)?.alerts == ["mention"])
        _ = await registration.reconcile(endpoint: endpoint, alerts: .personal, policy: .all)
        #expect(sandbox.pushSubscriptions.requestLog == ["GET", "POST", "GET", "PUT", "GET", "PUT"])
        // A new endpoint from the platform: a new subscription with the same keys.
        let keys = try await registration.keys()
        let moved = URL(string: "https://push.example/send/xyz")!
        _ = await registration.reconcile(endpoint: moved, alerts: .personal, policy: .all)
        #expect(sandbox.pushSubscriptions.requestLog.suffix(2) == ["GET", "POST"])
        #expect(sandbox.pushSubscriptions.subscription(token: token)?.endpoint == moved)
        #expect(sandbox.pushSubscriptions.subscription(token: token)?.publicKey == keys.publicKey)
    }

    /// UnifiedPush (issue 12): the distributor hands the app an endpoint (here ntfy's form, with its `up=1` query);
    /// Mastodon Web Push registers it as given, and a new one from the distributor replaces it with the same keys.
    @Test func aUnifiedPushDistributorEndpointIsSubscribedAsGiven() async throws {
        let registration = await registration(database: try Self.memoryStore(), cipher: try ValueCipher(key: .random()))
        let distributor = URL(string: "https://ntfy.example/upAbC123dEf?up=1")!
        guard case .active = await registration.reconcile(endpoint: distributor, alerts: .personal, policy: .all) else {
            Issue.record("not subscribed")
            return
        }
        #expect(
            sandbox.pushSubscriptions.subscription(token: token)?.endpoint.absoluteString == distributor.absoluteString)
        let renewed = URL(string: "https://ntfy.example/upZz9?up=1")!
        _ = await registration.reconcile(endpoint: renewed, alerts: .personal, policy: .all)
        #expect(sandbox.pushSubscriptions.subscription(token: token)?.endpoint.absoluteString == renewed.absoluteString)
        #expect(
            sandbox.pushSubscriptions.subscription(token: token)?.publicKey == (try await registration.keys()).publicKey
        )
    }

    @Test func aSubscriptionTheServerLostIsMadeAgain() async throws {
        let registration = await registration(database: try Self.memoryStore(), cipher: try ValueCipher(key: .random()))
        _ = await registration.reconcile(endpoint: endpoint, alerts: .personal, policy: .all)
        _ = sandbox.pushSubscriptions.answer(SandboxHTTPRequest(method: "DELETE", target: "/"), token: token)
        let status = await registration.reconcile(endpoint: endpoint, alerts: .personal, policy: .all)
        guard case .active = status else {
            Issue.record("not active: \(status)")
            return
        }
        #expect(sandbox.pushSubscriptions.subscription(token: token) != nil)
    }

    @Test func aFailedResubscribeKeepsTheOldSubscriptionAndSaysSo() async throws {
        let registration = await registration(database: try Self.memoryStore(), cipher: try ValueCipher(key: .random()))
        _ = await registration.reconcile(endpoint: endpoint, alerts: .personal, policy: .all)
        let keys = try await registration.keys()
        faults.add(.status(503), on: .path("/api/v1/push/subscription", method: "POST"), times: 1)
        let moved = URL(string: "https://push.example/send/new")!
        let failed = await registration.reconcile(endpoint: moved, alerts: .personal, policy: .all)
        guard case .failed(let reason) = failed else {
            Issue.record("a failed subscribe was reported as \(failed)")
            return
        }
        #expect(reason.contains("503"))
        #expect(failed.tierRegistration == .none)
        #expect(try await registration.lastError() == reason)
        // Nothing was deleted: the old subscription still delivers, the keys are the same.
        #expect(sandbox.pushSubscriptions.subscription(token: token)?.endpoint == endpoint)
        #expect(try await registration.keys().publicKey == keys.publicKey)
        // The next launch tries again and succeeds.
        guard case .active = await registration.reconcile(endpoint: moved, alerts: .personal, policy: .all) else {
            Issue.record("the retry did not subscribe")
            return
        }
        #expect(sandbox.pushSubscriptions.subscription(token: token)?.endpoint == moved)
        #expect(try await registration.lastError() == nil)
    }

    @Test func keysAreSealedAtRestAndSurviveReopening() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tidings-push-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("push.sqlite").path
        let cipher = try ValueCipher(key: .random())
        let first = try await SQLiteDatabase.open(path: path, schema: PushStoreSchema.schema)
        let keys = try await registration(database: first, cipher: cipher).keys()
        first.close()
        let raw =
            try Data(contentsOf: URL(fileURLWithPath: path))
            + ((try? Data(contentsOf: URL(fileURLWithPath: path + "-wal"))) ?? Data())
        #expect(raw.range(of: Data(keys.privateKey.rawRepresentation)) == nil)
        #expect(raw.range(of: Data(keys.authSecret)) == nil)
        let second = try await SQLiteDatabase.open(path: path, schema: PushStoreSchema.schema)
        defer { second.close() }
        let again = try await registration(database: second, cipher: cipher).keys()
        #expect(again.publicKey == keys.publicKey)
        #expect(again.authSecret == keys.authSecret)
        // Another key cannot open them.
        await #expect(throws: StoreError.self) {
            _ = try await registration(database: second, cipher: try ValueCipher(key: .random())).keys()
        }
    }

    @Test func concurrentFirstCallsShareOneKeyPair() async throws {
        let registration = await registration(database: try Self.memoryStore(), cipher: try ValueCipher(key: .random()))
        let keys = try await withThrowingTaskGroup(of: [UInt8].self) { group in
            for _ in 0..<64 { group.addTask { try await registration.keys().publicKey } }
            return try await group.reduce(into: Set<[UInt8]>()) { $0.insert($1) }
        }
        #expect(keys.count == 1)
        #expect(keys.first == (try await registration.keys().publicKey))
    }

    @Test func signOutUnsubscribesAndForgetsTheKeys() async throws {
        let registration = await registration(database: try Self.memoryStore(), cipher: try ValueCipher(key: .random()))
        _ = await registration.reconcile(endpoint: endpoint, alerts: .personal, policy: .all)
        let keys = try await registration.keys()
        #expect(try await registration.signOut() == .none)
        #expect(sandbox.pushSubscriptions.subscription(token: token) == nil)
        #expect(try await registration.keys().publicKey != keys.publicKey)
    }

    @Test func theClientMapsTheServersAnswers() async throws {
        let client = await client()
        #expect(try await client.current() == nil)
        await #expect(throws: MastodonError.notFound) {
            _ = try await client.update(alerts: .personal, policy: .all)
        }
        try await client.unsubscribe()
        let keys = try WebPushSubscriptionKeys.generate()
        let created = try await client.subscribe(
            endpoint: endpoint, keys: keys, alerts: .personal, policy: .none, standard: false)
        #expect(created.standard == false)
        #expect(created.policy == MastodonPushPolicy.none)
        #expect(try await client.current() == created)
        let updated = try await client.update(alerts: MastodonPushAlerts(enabled: ["poll"]), policy: .follower)
        #expect(updated.alerts.enabled == ["poll"])
        #expect(updated.policy == .follower)
        try await client.unsubscribe()
        #expect(try await client.current() == nil)
    }
}
