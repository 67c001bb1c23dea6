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

    /// What the app's glue does with one opened push of a Nextcloud Social account: a Social push polls the
    /// Social app's notifications from the last one seen and runs each through the policy, remembering which
    /// raised notification the push's `nid` became; a withdrawal returns the identifiers to take down.
    actor SocialGlue {
        let server: Server
        let policy: NotificationPolicyStore
        let map: NextcloudRaisedNotifications
        var newestSeen: String?

        init(server: Server, database: SQLiteDatabase) {
            self.server = server
            policy = NotificationPolicyStore(database: database)
            map = NextcloudRaisedNotifications(database: database)
        }

        func handle(_ subject: NextcloudProxySubject) async throws -> (raised: [String], withdrawn: [String]) {
            switch try await map.outcome(of: subject, account: NextcloudLoopbackEndToEndTests.account) {
            case .pollNotifications(let nid):
                var raised: [String] = []
                for notification in try await poll().reversed() {
                    guard
                        let candidate = NotificationCandidate(
                            notification, account: NextcloudLoopbackEndToEndTests.account, origin: .poll)
                    else { continue }
                    let decision = try await policy.decideAndRecord(
                        candidate, settings: NotificationSettings(),
                        context: NotificationPolicyContext(
                            now: Date(), timeZone: TimeZone(identifier: "UTC")!, marker: nil,
                            content: NotificationContentContext(accountHandle: NextcloudLoopbackEndToEndTests.account)
                        ))
                    if let request = decision.request {
                        raised.append(request.identifier)
                        try await map.record(
                            account: NextcloudLoopbackEndToEndTests.account, nid: nid,
                            raisedIdentifier: request.identifier)
                    }
                }
                return (raised, [])
            case .withdraw(let identifiers):
                return ([], identifiers)
            case .raise:
                Issue.record("a Social push was raised from its subject")
                return ([], [])
            }
        }

        /// `GET …/apps/social/api/v1/notifications?since_id=<newest seen>`, newest first.
        private func poll() async throws -> [MastodonNotification] {
            var components = URLComponents(
                url: server.url.appendingPathComponent("index.php/apps/social/api/v1/notifications"),
                resolvingAgainstBaseURL: false)!
            if let newestSeen { components.queryItems = [URLQueryItem(name: "since_id", value: newestSeen)] }
            var request = HTTPRequest(method: .get, url: components.url!)
            request.headers["Authorization"] =
                "Basic "
                + Data("\(server.credentials.user):\(server.credentials.appPassword)".utf8).base64EncodedString()
            let response = try await server.send(request)
            #expect(response.status == 200)
            let list = try MastodonWire.decode([MastodonNotification].self, from: response.body)
            if let newest = list.first { newestSeen = newest.id.rawValue }
            return list
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
        let glue = SocialGlue(server: server, database: try SQLiteDatabase.inMemory(schema: Self.schema))

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
            let handled = try await glue.handle(subject)
            #expect(handled.raised.count == 1, "push \(index) raised \(handled.raised)")
            raised += handled.raised
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
        var withdrawn: [[String]] = []
        for withdrawal in withdrawals { withdrawn.append(try await glue.handle(withdrawal).withdrawn) }
        #expect(withdrawn == [[raised[0]], [raised[1], raised[2]], [raised[3]]])
        #expect(try await glue.handle(.deleteAll).withdrawn.isEmpty, "a repeated withdrawal takes down nothing")

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
