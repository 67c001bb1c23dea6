import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsMastodon
import TidingsNet
import TidingsPush
import TidingsSandbox
import TidingsSandboxKit

/// Nextcloud push with nothing faked between the server event and the raised (and withdrawn) notification: the
/// sandbox server, its push-proxy stand-in and the device's receivers all listen on loopback sockets, and the
/// app side talks to them through `HTTPClient`.
@Suite(.timeLimit(.minutes(2))) struct NextcloudLoopbackEndToEndTests {
    static let account = "ada@nextcloud.sandbox"
    static let schema = SQLiteSchema(
        tables: NotificationPolicyStore.tables + [NextcloudRaisedNotifications.table],
        migrations: [
            .init(version: 1, name: "push") { db in
                try NotificationPolicyStore.createTables(db)
                try NextcloudRaisedNotifications.createTable(db)
            }
        ])

    /// The sandbox served on loopback, with the app's side of the account.
    struct Server {
        let sandbox: NextcloudSandboxServer
        let listener: SandboxHTTPListener
        let url: URL
        let credentials: NextcloudCredentials
        let send: @Sendable (HTTPRequest) async throws -> HTTPResponse

        /// The sandbox's RSA-2048 key is generated on a thread of its own, off the cooperative pool (2 threads).
        static func start() async throws -> Server {
            try Server(sandbox: try await onDedicatedThread("nextcloud sandbox key") { try NextcloudSandboxServer() })
        }

        private init(sandbox: NextcloudSandboxServer) throws {
            self.sandbox = sandbox
            listener = try sandbox.http.serve()
            url = URL(string: "http://127.0.0.1:\(listener.port)")!
            credentials = NextcloudCredentials(user: sandbox.user, appPassword: sandbox.appPassword)
            let client = HTTPClient()
            send = { try await client.response(for: $0) }
        }
    }

    /// The app's side of a Nextcloud Social account, wired as an app wires it: a Mastodon engine over the
    /// Social app's Mastodon-compatible API (on loopback, logged in with the app password), the account's raiser
    /// and the library's `NextcloudPushHandler` over the proxy registration's keys.
    struct SocialAccount {
        static let schema = SQLiteSchema(
            tables: MastodonTimelineSchema.schema.tables + NotificationPolicyStore.tables
                + [NextcloudRaisedNotifications.table],
            migrations: MastodonTimelineSchema.schema.migrations + [
                .init(version: MastodonTimelineSchema.schema.migrations.count + 1, name: "push") { db in
                    try NotificationPolicyStore.createTables(db)
                    try NextcloudRaisedNotifications.createTable(db)
                }
            ])

        let raiser: MastodonNotificationRaiser
        let handler: NextcloudPushHandler

        init(server: Server, decryptor: NextcloudProxyPushDecryptor) async throws {
            let database = try SQLiteDatabase.inMemory(schema: Self.schema)
            let client = MastodonAPIClient(
                server: server.url.appendingPathComponent("index.php/apps/social"),
                accountKey: NextcloudLoopbackEndToEndTests.account,
                authorization: MastodonAuthorization(token: "unused: the app password logs in"),
                transport: NextcloudSocialTransport(credentials: server.credentials, send: server.send))
            // What `GET /api/v1/instance` of Nextcloud Social answers: no streaming, no Web Push, v1 only.
            let instance = try MastodonWire.decode(
                MastodonInstanceV1.self,
                from: Data(#"{"uri":"nextcloud.sandbox","version":"2.7.0","urls":{},"vapid_key":""}"#.utf8))
            let engine = MastodonAccountEngine(
                client: client, store: MastodonTimelineStore(database: database),
                capabilities: MastodonCapabilities(instance))
            raiser = MastodonNotificationRaiser(
                engine: engine, policy: NotificationPolicyStore(database: database),
                clock: NotificationPolicyClock(TestClock(), origin: Date()))
            handler = NextcloudPushHandler(
                raiser: raiser, decryptor: decryptor, raised: NextcloudRaisedNotifications(database: database))
        }
    }

    @Test func socialPushesTravelOverLoopbackAreRaisedByThePolicyAndWithdrawnByEachDeleteKind() async throws {
        let server = try await Server.start()
        defer { server.listener.stop() }
        let receiver = NextcloudSandboxPushReceiver()
        let receiverListener = try receiver.httpServer().serve()
        defer { receiverListener.stop() }
        receiver.register(device: "phone")

        let connection = NextcloudConnection(serverURL: server.url, credentials: server.credentials, send: server.send)
        let state = await connection.connect()
        #expect(
            PushRegistrationChoice.choose(account: .nextcloudSocial, platform: .apple, nextcloud: state)
                == .nextcloudProxy)
        let deviceKey = try await onDedicatedThread("device key") { try NextcloudDeviceKey() }
        let registrar = NextcloudProxyRegistrar(
            serverURL: server.url, credentials: server.credentials, send: server.send)
        let pushToken = NextcloudSandboxPushReceiver.pushToken(device: "phone", port: receiverListener.port)
        let registration = try await registrar.register(
            pushToken: pushToken, deviceKey: deviceKey, proxyServer: server.url)
        let decryptor = NextcloudProxyPushDecryptor(
            deviceKey: deviceKey.privateKey,
            userPublicKey: try TidingsCrypto.RSA.PublicKey(pemRepresentation: registration.userPublicKey))
        let account = try await SocialAccount(server: server, decryptor: decryptor)
        let router = NextcloudPushRouter()
        router.register(account.handler, key: pushToken)
        let events = account.raiser.events()

        // Four Social notifications, each pushed over loopback, opened, polled and raised once.
        var nids: [Int64] = []
        var raised: [String] = []
        for (index, author) in ["bob", "carol", "dave", "erin"].enumerated() {
            nids.append(
                await server.sandbox.createNotification(
                    app: "social", subject: "\(author) mentioned you", author: author))
            let pushes = await receiver.pushes(count: index + 1)
            let push = try #require(pushes.count == index + 1 ? pushes.last : nil, "push \(index) did not arrive")
            let subject = try decryptor.open(messageJSON: push.body)
            guard case .notification(let nid, "social", _, "mention", let id?) = subject else {
                Issue.record("unexpected subject \(subject)")
                return
            }
            #expect(nid == nids[index])
            #expect(id.count == 40 && id.allSatisfy(\.isHexDigit), "a Social push names an object hash")
            let routed = try await router.route(messageJSON: push.body, key: pushToken)
            #expect(routed.account == Self.account)
            guard case .polled(nid, let decisions) = routed.handling else {
                Issue.record("push \(index) was not polled: \(routed.handling)")
                return
            }
            let requests = decisions.compactMap(\.decision.request)
            #expect(requests.count == 1, "push \(index) raised \(requests.map(\.identifier))")
            #expect(requests.first?.title.text.lowercased().contains(author) == true)
            raised += requests.map(\.identifier)
        }
        #expect(Set(raised).count == 4)
        #expect(server.sandbox.deliveries.allSatisfy { $0.status == 200 && $0.failure == nil })

        // delete, delete-multiple and delete-all each withdraw exactly what they name, once.
        await server.sandbox.removeNotification(nids[0])
        await server.sandbox.removeNotifications([nids[1], nids[2]])
        await server.sandbox.removeAllNotifications()
        let pushes = await receiver.pushes(count: 7)
        try #require(pushes.count == 7)
        let withdrawals = try pushes[4...].map { try decryptor.open(messageJSON: $0.body) }
        #expect(
            withdrawals == [.delete(nid: nids[0]), .deleteMultiple(nids: [nids[1], nids[2]]), .deleteAll])
        var withdrawn: [NextcloudPushHandling] = []
        for push in pushes[4...] { withdrawn.append(try await router.route(messageJSON: push.body).handling) }
        #expect(
            withdrawn == [
                .withdrew(raisedIdentifiers: [raised[0]]), .withdrew(raisedIdentifiers: [raised[1], raised[2]]),
                .withdrew(raisedIdentifiers: [raised[3]]),
            ])
        #expect(
            try await account.handler.handle(.deleteAll) == .withdrew(raisedIdentifiers: []),
            "a repeated withdrawal takes down nothing")
        // The app read all of it from the raiser's one event stream: four raises, then the three withdrawals.
        await account.raiser.withdrawRaised(["fence"])  // ends the read below: nothing is waited for
        var seen: [AccountNotificationEvent] = []
        for await event in events {
            if event == .withdrawRaised(["fence"]) { break }
            if case .decided(let record) = event, record.decision.request == nil { continue }
            seen.append(event)
        }
        let raisedSeen = seen.compactMap { event in
            if case .decided(let record) = event { record.decision.request?.identifier } else { nil }
        }
        #expect(raisedSeen == raised)
        #expect(
            Array(seen.dropFirst(4)) == [
                .withdrawRaised([raised[0]]), .withdrawRaised([raised[1], raised[2]]), .withdrawRaised([raised[3]]),
            ])

        // Sign-out deletes at the server and at the proxy; afterwards nothing is pushed.
        try await registrar.unregister(registration)
        let left = await server.sandbox.proxyRegistration
        #expect(!left.server && !left.proxy)
        let before = server.sandbox.deliveries.count
        await server.sandbox.createNotification(app: "social", subject: "after sign-out")
        #expect(server.sandbox.deliveries.count == before)
    }

    @Test func webPushRegistrationIsActivatedByAPushOverLoopback() async throws {
        let server = try await Server.start()
        defer { server.listener.stop() }
        await server.sandbox.setSwitches(push: false, webPush: true)
        let endpoint = SandboxWebPushEndpoint()
        let endpointListener = try endpoint.httpServer().serve()
        defer { endpointListener.stop() }
        let keys = try WebPushSubscriptionKeys.generate()
        endpoint.register("phone", keys: keys)
        let subscription = NextcloudWebPushSubscription(
            endpoint: URL(string: "http://127.0.0.1:\(endpointListener.port)/push/phone")!,
            uaPublicKey: keys.base64URLPublicKey, auth: WebPushBase64URL.encode(keys.authSecret))

        let connection = NextcloudConnection(serverURL: server.url, credentials: server.credentials, send: server.send)
        #expect(
            PushRegistrationChoice.choose(
                account: .nextcloudSocial, platform: .unifiedPush, nextcloud: await connection.connect())
                == .nextcloudWebPush)
        let registrar = NextcloudWebPushRegistrar(
            serverURL: server.url, credentials: server.credentials, send: server.send)
        #expect(try await registrar.vapidKey() == server.sandbox.vapidPublicKey)
        #expect(try await registrar.register(subscription) == .awaitingActivation)

        // The activation token arrives as real Web Push: VAPID-signed by the server's key, aes128gcm.
        let activation = try #require(await endpoint.messages(count: 1).first)
        #expect(activation.failure == nil, "\(activation.failure ?? "")")
        #expect(activation.contentEncoding == "aes128gcm")
        #expect(activation.vapid.map { WebPushBase64URL.encode($0.publicKey) } == server.sandbox.vapidPublicKey)
        // Nothing but the activation is sent before activation.
        await server.sandbox.createNotification(app: "social", subject: "too early")
        #expect(endpoint.messages.count == 1)
        #expect(try await registrar.activate(decryptedPush: try #require(activation.plaintext)) == .active)
        #expect(try await registrar.activate(decryptedPush: try #require(activation.plaintext)) == .active)

        // A notification now arrives as Web Push, in the proxy subject's shape; a Social one means "poll".
        let nid = await server.sandbox.createNotification(app: "social", subject: "bob mentioned you")
        let message = try #require(await endpoint.messages(count: 2).dropFirst().first)
        let subject = try NextcloudProxySubject(decryptedJSON: try #require(message.plaintext))
        guard case .notification(nid, "social", "bob mentioned you", "mention", _) = subject else {
            Issue.record("unexpected subject \(subject)")
            return
        }
        let map = NextcloudRaisedNotifications(database: try SQLiteDatabase.inMemory(schema: Self.schema))
        #expect(try await map.outcome(of: subject, account: Self.account) == .pollNotifications(nid: nid))

        // The same keys again only change the filter (200); a filtered-out app is not pushed.
        #expect(try await registrar.register(subscription, appTypes: "all,-spreed") == .active)
        // Both deliveries so far (the activation, sent in a task of its own, and the notification) are recorded.
        let sent = await server.sandbox.deliveries(count: 2).count
        #expect(sent == 2)
        await server.sandbox.createNotification(app: "spreed", subject: "filtered")
        #expect(server.sandbox.deliveries.count == sent)

        // Unregistering ends the pushes.
        try await registrar.unregister()
        await server.sandbox.createNotification(app: "social", subject: "after unregister")
        #expect(server.sandbox.deliveries.count == sent)
        #expect(endpoint.messages.count == 2)
    }

    @Test func webPushDisabledByTheAdministratorIsAStateWithAMessage() async throws {
        let server = try await Server.start()
        defer { server.listener.stop() }
        let registrar = NextcloudWebPushRegistrar(
            serverURL: server.url, credentials: server.credentials, send: server.send)
        let keys = try WebPushSubscriptionKeys.generate()
        let subscription = NextcloudWebPushSubscription(
            endpoint: URL(string: "https://push.example/up/1")!, uaPublicKey: keys.base64URLPublicKey,
            auth: WebPushBase64URL.encode(keys.authSecret))
        let state = try await registrar.register(subscription)
        #expect(state == .disabledByAdministrator)
        #expect(state.message?.contains("administrator") == true)
        await #expect(throws: NextcloudPushError.refused) { try await registrar.vapidKey() }
        // Removing is always allowed (200: there was nothing to remove).
        try await registrar.unregister()
        // A malformed key is refused with the server's code.
        await server.sandbox.setSwitches(webPush: true)
        let bad = NextcloudWebPushSubscription(
            endpoint: subscription.endpoint, uaPublicKey: "not-a-key", auth: subscription.auth)
        do {
            _ = try await registrar.register(bad)
            Issue.record("a malformed key was accepted")
        } catch {
            #expect(error.status == 400 && error.detail == "INVALID_P256DH")
        }
    }
}
