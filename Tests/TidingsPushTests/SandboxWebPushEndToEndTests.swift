import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsMastodon
import TidingsNet
import TidingsSandbox
import TidingsSandboxKit

@testable import TidingsPush

/// A status mentioning the account travels from the Mastodon sandbox to a decrypted payload with nothing faked
/// between: the app's registrar subscribes through the sandbox's API, the sandbox encrypts and VAPID-signs as
/// Mastodon does and POSTs over a loopback socket to a push endpoint, which checks VAPID and decrypts with the
/// keys from the app's store. Python's http_ece decrypts the same bodies.
@Suite(.timeLimit(.minutes(2))) struct SandboxWebPushEndToEndTests {
    struct Setup {
        let sandbox: MastodonSandboxServer
        let registrar: MastodonWebPushRegistrar
        let endpoint: SandboxWebPushEndpoint
        let listener: SandboxHTTPListener
        let alice: String
        let bob: String
        let url: URL
    }

    private func setUp() async throws -> Setup {
        let sandbox = MastodonSandboxServer()
        let alice = await sandbox.addAccount(username: "alice", token: "alice-token")
        let bob = await sandbox.addAccount(username: "bob", token: "bob-token")
        let api = MastodonAPIClient(
            server: URL(string: "https://sandbox.invalid")!, accountKey: "alice@sandbox",
            authorization: MastodonAuthorization(token: "alice-token"),
            transport: MastodonSandboxTransport(server: sandbox.httpServer()))
        let registrar = MastodonWebPushRegistrar(
            account: "alice@sandbox", database: try SQLiteDatabase.inMemory(schema: PushStoreSchema.schema),
            cipher: try ValueCipher(key: .random()), client: MastodonPushSubscriptionClient(api: api))
        let endpoint = SandboxWebPushEndpoint()
        let listener = try endpoint.httpServer().serve()
        endpoint.register("alice", keys: try await registrar.keys())
        let url = try #require(URL(string: "http://127.0.0.1:\(listener.port)/push/alice"))
        return Setup(
            sandbox: sandbox, registrar: registrar, endpoint: endpoint, listener: listener, alice: alice, bob: bob,
            url: url)
    }

    private func mentionTravels(standard: Bool) async throws -> (
        SandboxWebPushEndpoint.Message, WebPushSubscriptionKeys
    ) {
        let setup = try await setUp()
        defer { setup.listener.stop() }
        let status = await setup.registrar.reconcile(
            endpoint: setup.url, alerts: MastodonPushAlerts(categories: ["mention"]), policy: .all)
        guard case .active(let subscription) = status else {
            Issue.record("not subscribed: \(status)")
            throw CancellationError()
        }
        if !standard {
            // An older server: the same subscription, sent in the legacy encoding.
            let keys = try await setup.registrar.keys()
            _ = try await MastodonPushSubscriptionClient(
                api: MastodonAPIClient(
                    server: URL(string: "https://sandbox.invalid")!, accountKey: "alice@sandbox",
                    authorization: MastodonAuthorization(token: "alice-token"),
                    transport: MastodonSandboxTransport(server: setup.sandbox.httpServer()))
            ).subscribe(endpoint: setup.url, keys: keys, alerts: .personal, policy: .all, standard: false)
        }
        // A favourite is not pushed (alert off in the standard case); the mention is.
        let text = "hello @alice, lunch at noon?"
        let statusID = await setup.sandbox.post(as: setup.bob, text, mentioning: [setup.alice])
        let messages = await setup.endpoint.messages(count: 1)
        let message = try #require(messages.first)
        #expect(message.failure == nil, "\(message.failure ?? "")")
        #expect(message.contentEncoding == (standard ? "aes128gcm" : "aesgcm"))
        let vapid = try #require(message.vapid)
        #expect(WebPushBase64URL.encode(vapid.publicKey) == subscription.serverKey)
        #expect(vapid.audience == "http://127.0.0.1:\(setup.listener.port)")
        let payload = try JSONValue(parsing: Data(try #require(message.plaintext)))
        #expect(payload["notification_type"] == .string("mention"))
        #expect(payload["body"] == .string(text))
        #expect(payload["title"] == .string("bob mentioned you"))
        // The pushed notification is the one the API lists for alice.
        let listed = try await MastodonAPIClient(
            server: URL(string: "https://sandbox.invalid")!, accountKey: "alice@sandbox",
            authorization: MastodonAuthorization(token: "alice-token"),
            transport: MastodonSandboxTransport(server: setup.sandbox.httpServer())
        ).notifications()
        let mention = try #require(listed.items.first { $0.status?.id.rawValue == statusID })
        #expect(payload["notification_id"] == .string(mention.id.rawValue))
        let deliveries = await setup.sandbox.pushSubscriptions.deliveries(count: 1)
        #expect(deliveries.map(\.status) == [201])
        #expect(setup.sandbox.pushSubscriptions.pushesStarted == 1)
        return (message, try await setup.registrar.keys())
    }

    @Test func aMentionArrivesDecryptedInAes128gcm() async throws {
        let (message, keys) = try await mentionTravels(standard: true)
        try await expectHttpEceDecrypts(message, keys: keys)
    }

    @Test func aMentionArrivesDecryptedInTheLegacyAesgcm() async throws {
        let (message, keys) = try await mentionTravels(standard: false)
        try await expectHttpEceDecrypts(message, keys: keys)
    }

    /// Python's http_ece decrypts what the sandbox sent to the same plaintext.
    private func expectHttpEceDecrypts(_ message: SandboxWebPushEndpoint.Message, keys: WebPushSubscriptionKeys)
        async throws
    {
        let peer = try await PythonPeer.shared("push_encrypt.py")
        let url = try #require(URL(string: "http://127.0.0.1:\(peer.port)/decrypt"))
        let request = try HTTPRequest.json(
            .post, url: url,
            body: WebPushInteropTests.Batch(cases: [
                WebPushInteropTests.DecryptCase(
                    privateKey: keys.base64URLPrivateKey, auth: keys.base64URLAuthSecret,
                    encoding: message.contentEncoding ?? "", body: WebPushBase64URL.encode(message.body),
                    cryptoKey: message.cryptoKey, encryption: message.encryption)
            ]))
        let results = try await HTTPClient().decode(
            WebPushInteropTests.Results<WebPushInteropTests.Decrypted>.self, from: request
        ).results
        #expect(results.first?.error == nil)
        #expect(try results.first?.plaintext.map { try WebPushBase64URL.decode($0) } == message.plaintext)
    }

    @Test func noPushForAnAlertThatIsOffOrWithoutSubscription() async throws {
        let setup = try await setUp()
        defer { setup.listener.stop() }
        await setup.sandbox.follow(setup.bob, setup.alice)
        _ = await setup.registrar.reconcile(
            endpoint: setup.url, alerts: MastodonPushAlerts(enabled: ["mention"]), policy: .all)
        await setup.sandbox.follow(setup.alice, setup.bob)  // bob gets a follow; bob has no subscription
        _ = await setup.sandbox.post(as: setup.bob, "@alice hi", mentioning: [setup.alice])
        // Only the mention was pushed (counted synchronously when each notification was made): the follow alert
        // is off and bob has no subscription.
        #expect(setup.sandbox.pushSubscriptions.pushesStarted == 1)
        let messages = await setup.endpoint.messages(count: 1)
        #expect(messages.count == 1)
    }

    @Test func aForgedOrMisaddressedPushIsRefusedByTheEndpoint() async throws {
        let setup = try await setUp()
        defer { setup.listener.stop() }
        let keys = try await setup.registrar.keys()
        let message = try WebPushEncryptor.encrypt(
            Array("{}".utf8), receiverPublicKey: keys.publicKey, authSecret: keys.authSecret, encoding: .aes128gcm)
        let signer = try TidingsCrypto.P256.Signing.PrivateKey()
        let elsewhere = try #require(URL(string: "https://push.example/push/alice"))
        let wrongAudience = try WebPushVAPID.headers(
            endpoint: elsewhere, key: signer, subject: "mailto:x@example", expiry: Date().addingTimeInterval(600),
            standard: true)
        for authorization in [nil, wrongAudience.authorization] as [String?] {
            var request = HTTPRequest(method: .post, url: setup.url, body: Data(message.body))
            request.headers["Content-Encoding"] = "aes128gcm"
            request.headers["Authorization"] = authorization
            let response = try await HTTPClient().response(for: request)
            #expect(response.status == 401)
        }
        #expect(setup.endpoint.messages.allSatisfy { $0.plaintext == nil })
    }
}
