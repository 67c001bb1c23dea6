import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsPush
import TidingsSandbox

/// A Nextcloud Web Push (UnifiedPush) subscription kept by the library, over loopback sockets with the sandbox
/// server and a push endpoint that checks VAPID: activated by the push that carries its token, kept across a
/// relaunch (nothing re-sent, the keys still open the pushes), a Social push raised through the handler, and
/// sign-out ending the pushes.
@Suite(.timeLimit(.minutes(2))) struct NextcloudWebPushLoopbackTests {
    static func incoming(_ message: SandboxWebPushEndpoint.Message, _ endpoint: URL) -> IncomingWebPush {
        IncomingWebPush(
            endpoint: endpoint, body: message.body, contentEncoding: message.contentEncoding,
            cryptoKey: message.cryptoKey, encryption: message.encryption)
    }

    @Test func aStoredSubscriptionIsActivatedSurvivesARelaunchAndRaisesASocialPush() async throws {
        let server = try await NextcloudLoopbackEndToEndTests.Server.start()
        defer { server.listener.stop() }
        await server.sandbox.setSwitches(push: false, webPush: true)
        let endpoint = SandboxWebPushEndpoint()
        let endpointListener = try endpoint.httpServer().serve()
        defer { endpointListener.stop() }
        let url = URL(string: "http://127.0.0.1:\(endpointListener.port)/push/phone")!
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nc-webpush-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let cipher = try ValueCipher(key: .random())
        @Sendable func launch() async throws -> (SQLiteDatabase, NextcloudWebPushDevice) {
            let database = try await SQLiteDatabase.open(
                path: folder.appendingPathComponent("push.sqlite").path, schema: PushStoreSchema.schema)
            let registrar = NextcloudWebPushRegistrar(
                serverURL: server.url, credentials: server.credentials, send: server.send)
            return (
                database,
                NextcloudWebPushDevice(
                    account: NextcloudLoopbackEndToEndTests.account, database: database, cipher: cipher,
                    registrar: registrar)
            )
        }
        // The proxy keys the handler is built with (unused by Web Push): made off the cooperative pool.
        let rsa = try #require(await onDedicatedThread("proxy keys") { NextcloudPushHandlerTests.keys })
        let account = try await NextcloudLoopbackEndToEndTests.SocialAccount(
            server: server,
            decryptor: NextcloudProxyPushDecryptor(deviceKey: rsa.device, userPublicKey: rsa.user.publicKey))

        let (database, device) = try await launch()
        let router = NextcloudPushRouter()
        router.register(account.handler, device: device, endpoint: url)
        endpoint.register("phone", keys: try await device.keys())
        #expect(await device.reconcile(endpoint: url) == .awaitingActivation)
        let activation = try #require(await endpoint.messages(count: 1).first)
        #expect(activation.failure == nil, "\(activation.failure ?? "")")
        #expect(try await router.route(Self.incoming(activation, url)).handling == .activated(.active))
        database.close()

        // Relaunched: the stored subscription is active for this endpoint, so nothing is sent.
        let (again, relaunched) = try await launch()
        defer { again.close() }
        router.register(account.handler, device: relaunched, endpoint: url)
        let before = server.sandbox.http.log.entries.count
        #expect(await relaunched.reconcile(endpoint: url) == .active)
        #expect(server.sandbox.http.log.entries.count == before, "the relaunch sent nothing")

        // A Social notification arrives as Web Push, opened with the kept keys, and the raiser raises it once.
        let nid = await server.sandbox.createNotification(app: "social", subject: "bob mentioned you")
        let message = try #require(await endpoint.messages(count: 2).dropFirst().first)
        let routed = try await router.route(Self.incoming(message, url))
        #expect(routed.account == NextcloudLoopbackEndToEndTests.account)
        guard case .polled(nid, let decisions) = routed.handling else {
            Issue.record("the Social push was not polled")
            return
        }
        #expect(decisions.compactMap(\.decision.request).count == 1)

        // Sign-out: the server forgets the subscription and the keys are gone.
        try await relaunched.withdrawRegistration()
        await server.sandbox.createNotification(app: "social", subject: "after sign-out")
        #expect(endpoint.messages.count == 2)
        #expect(try await relaunched.status() == nil)
        router.remove(account: NextcloudLoopbackEndToEndTests.account)
        await #expect(throws: PushRoutingError.unknownEndpoint) { try await router.route(Self.incoming(message, url)) }
    }
}
