import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsPush

/// The library's Nextcloud proxy-push glue over alice's raiser (a Mastodon-API account, as Nextcloud Social is):
/// each subject kind, a forged push and a push for no registered account.
@Suite(.timeLimit(.minutes(1))) struct NextcloudPushHandlerTests {
    /// The device's and the account's keys, shared by the suite (2048-bit generation is the slow part).
    static let keys: (device: TidingsCrypto.RSA.PrivateKey, user: TidingsCrypto.RSA.PrivateKey)? = {
        guard let device = try? TidingsCrypto.RSA.PrivateKey(), let user = try? TidingsCrypto.RSA.PrivateKey()
        else { return nil }
        return (device, user)
    }()

    /// What a Nextcloud server sends through the proxy: the subject encrypted to the device key, signed by
    /// `signer` (the account's key unless a test forges it), as the `data` JSON object.
    static func push(_ json: String, signer: TidingsCrypto.RSA.PrivateKey? = nil) throws -> [UInt8] {
        let keys = try #require(Self.keys)
        let block = try keys.device.publicKey.encrypt(Array(json.utf8), padding: .pkcs1v15)
        let signature = try (signer ?? keys.user).signatureSHA512PKCS1(for: block)
        let envelope: JSONValue = [
            "subject": .string(Data(block).base64EncodedString()),
            "signature": .string(Data(signature).base64EncodedString()),
        ]
        return Array(envelope.jsonData())
    }

    static func social(nid: Int64) -> String {
        #"{"app":"social","subject":"Bob mentioned you","type":"mention","id":"0a1b","nid":\#(nid)}"#
    }

    struct Setup {
        let fixture: GlueFixture
        let handler: NextcloudPushHandler

        init(configuration: NotificationRaiserConfiguration = NotificationRaiserConfiguration()) async throws {
            fixture = try await GlueFixture(configuration: configuration)
            let keys = try #require(NextcloudPushHandlerTests.keys)
            let schema = SQLiteSchema(
                tables: [NextcloudRaisedNotifications.table],
                migrations: [.init(version: 1, name: "map") { try NextcloudRaisedNotifications.createTable($0) }])
            handler = NextcloudPushHandler(
                raiser: fixture.raiser,
                decryptor: NextcloudProxyPushDecryptor(deviceKey: keys.device, userPublicKey: keys.user.publicKey),
                raised: NextcloudRaisedNotifications(database: try SQLiteDatabase.inMemory(schema: schema)))
        }

        /// bob mentions alice on the server and a Social push announces it as `nid`; returns what was raised.
        func mention(_ text: String, nid: Int64) async throws -> String {
            await fixture.server.post(as: fixture.bob, text, mentioning: [fixture.alice])
            let handling = try await handler.handle(messageJSON: try NextcloudPushHandlerTests.push(social(nid: nid)))
            guard case .polled(nid, let decisions) = handling else { throw PushRoutingError.unknownAccount }
            // Earlier mentions are decided again and dropped; only this one is raised.
            #expect(decisions.filter { $0.label != "drop:alreadyRaised" }.map(\.label) == ["raise"])
            let raised = decisions.compactMap(\.decision.request)
            #expect(raised.first?.body.text == text)
            return try #require(raised.count == 1 ? raised.first?.identifier : nil)
        }
    }

    /// The withdrawal events published so far (decisions skipped): a fence published now ends the read, so a
    /// missing withdrawal fails the expectation instead of waiting.
    static func withdrawals(_ setup: Setup, _ events: MastodonNotificationRaiser.AsyncStreamOfEvents) async
        -> [[String]]
    {
        await setup.fixture.withdrawals(events)
    }

    @Test func aSocialPushPollsAndThePolicyRaisesOnceThenADeleteWithdrawsIt() async throws {
        let setup = try await Setup()
        let events = setup.fixture.raiser.events()
        let identifier = try await setup.mention("hi @alice", nid: 5)
        #expect(try await setup.fixture.engine.notificationGroups().count == 1, "the poll stored the mention")
        // The same push again (a retry): polled, and the policy does not raise what it raised.
        let again = try await setup.handler.handle(messageJSON: try Self.push(Self.social(nid: 5)))
        guard case .polled(5, let decisions) = again else {
            Issue.record("unexpected \(again)")
            return
        }
        #expect(decisions.map(\.label) == ["drop:alreadyRaised"])

        let deleted = try await setup.handler.handle(messageJSON: try Self.push(#"{"delete":true,"nid":5}"#))
        #expect(deleted == .withdrew(raisedIdentifiers: [identifier]))
        #expect(await Self.withdrawals(setup, events) == [[identifier]])
        // A second delete of the same nid takes down nothing.
        let repeated = try await setup.handler.handle(messageJSON: try Self.push(#"{"delete":true,"nid":5}"#))
        #expect(repeated == .withdrew(raisedIdentifiers: []))
    }

    @Test func deleteMultipleAndDeleteAllWithdrawWhatTheyNameOnce() async throws {
        let setup = try await Setup()
        let events = setup.fixture.raiser.events()
        let first = try await setup.mention("one @alice", nid: 1)
        let second = try await setup.mention("two @alice", nid: 2)
        #expect(first != second)
        try await setup.handler.recordRaised(nid: 3, raisedIdentifier: "talk-3")

        let multiple = try await setup.handler.handle(
            messageJSON: try Self.push(#"{"delete-multiple":true,"nids":[1,3,99]}"#))
        #expect(multiple == .withdrew(raisedIdentifiers: [first, "talk-3"]))
        let all = try await setup.handler.handle(messageJSON: try Self.push(#"{"delete-all":true}"#))
        #expect(all == .withdrew(raisedIdentifiers: [second]))
        #expect(
            try await setup.handler.handle(messageJSON: try Self.push(#"{"delete-all":true}"#))
                == .withdrew(raisedIdentifiers: []))
        #expect(await Self.withdrawals(setup, events) == [[first, "talk-3"], [second]])
    }

    @Test(arguments: [NotificationLanguage.english, .german])
    func anotherAppsNotificationOnAppleGetsTheGenericWordingAndItsDeleteWithdrawsIt(
        language: NotificationLanguage
    ) async throws {
        var configuration = NotificationRaiserConfiguration()
        configuration.content = NotificationContentContext(
            language: language, platform: .apple, accountHandle: "alice@sandbox")
        let setup = try await Setup(configuration: configuration)
        let events = setup.fixture.raiser.events()
        let handling = try await setup.handler.handle(
            messageJSON: try Self.push(#"{"app":"spreed","subject":"Bob called","type":"call","id":"r1","nid":8}"#))
        guard case .otherAppRaised(8, "spreed", let request) = handling else {
            Issue.record("not worded: \(handling)")
            return
        }
        #expect(
            request.title.text
                == (language == .english ? "New notification in Talk" : "Neue Benachrichtigung in Talk"))
        #expect(request.body.text == "Bob called", "the server worded the subject in the person's language")
        #expect(request.identifier == "\(GlueFixture.account)#nextcloud:8")
        #expect(request.interruptionLevel == .passive)
        #expect(try await setup.fixture.engine.notificationGroups().isEmpty, "no Social poll ran")
        var iterator = events.makeAsyncIterator()
        #expect(await iterator.next() == .generic(request))
        // The library recorded what it worded: the server's delete withdraws it.
        let deleted = try await setup.handler.handle(messageJSON: try Self.push(#"{"delete":true,"nid":8}"#))
        #expect(deleted == .withdrew(raisedIdentifiers: [request.identifier]))
    }

    @Test func signOutWithdrawsAnotherAppsNotificationsAndForgetsTheNidMap() async throws {
        var configuration = NotificationRaiserConfiguration()
        configuration.content = NotificationContentContext(platform: .apple, accountHandle: "alice@sandbox")
        let setup = try await Setup(configuration: configuration)
        let mention = try await setup.mention("hi @alice", nid: 5)
        let talk = try await setup.handler.handle(
            messageJSON: try Self.push(#"{"app":"spreed","subject":"Bob called","type":"call","id":"r1","nid":8}"#))
        guard case .otherAppRaised(8, "spreed", let call) = talk else {
            Issue.record("not worded: \(talk)")
            return
        }
        let events = setup.fixture.raiser.events()
        let report = try await setup.handler.signOut()
        #expect(report.withdrawal.withdrawRequestIdentifiers == [call.identifier, mention].sorted())
        var iterator = events.makeAsyncIterator()
        #expect(await iterator.next() == .withdraw(report.withdrawal))
        // The map is gone: a late delete of either nid withdraws nothing more.
        let late = try await setup.handler.handle(messageJSON: try Self.push(#"{"delete-multiple":true,"nids":[5,8]}"#))
        #expect(late == .withdrew(raisedIdentifiers: []))
    }

    @Test func anotherAppsNotificationIsHandedToTheAppUnpolledWhereNothingMustBeShown() async throws {
        var configuration = NotificationRaiserConfiguration()
        configuration.content = NotificationContentContext(platform: .android)
        let setup = try await Setup(configuration: configuration)
        await setup.fixture.server.post(as: setup.fixture.bob, "hi @alice", mentioning: [setup.fixture.alice])
        let handling = try await setup.handler.handle(
            messageJSON: try Self.push(#"{"app":"spreed","subject":"Bob called","type":"call","id":"r1","nid":8}"#))
        #expect(handling == .otherApp(nid: 8, app: "spreed", subject: "Bob called", type: "call", id: "r1"))
        #expect(try await setup.fixture.engine.notificationGroups().isEmpty, "no Social poll ran")
        // Once the app recorded what it raised, the server's delete withdraws it.
        try await setup.handler.recordRaised(nid: 8, raisedIdentifier: "talk-8")
        let deleted = try await setup.handler.handle(messageJSON: try Self.push(#"{"delete":true,"nid":8}"#))
        #expect(deleted == .withdrew(raisedIdentifiers: ["talk-8"]))
    }

    @Test func aPushNotSignedByTheAccountRaisesAndWithdrawsNothing() async throws {
        let setup = try await Setup()
        let keys = try #require(Self.keys)
        await setup.fixture.server.post(as: setup.fixture.bob, "hi @alice", mentioning: [setup.fixture.alice])
        try await setup.handler.recordRaised(nid: 9, raisedIdentifier: "kept-9")
        await #expect(throws: NextcloudPushError.invalidSignature) {
            try await setup.handler.handle(messageJSON: try Self.push(Self.social(nid: 4), signer: keys.device))
        }
        await #expect(throws: NextcloudPushError.invalidSignature) {
            try await setup.handler.handle(messageJSON: try Self.push(#"{"delete-all":true}"#, signer: keys.device))
        }
        await #expect(throws: NextcloudPushError.malformedMessage) {
            try await setup.handler.handle(messageJSON: Array("not json".utf8))
        }
        #expect(try await setup.fixture.engine.notificationGroups().isEmpty, "no Social poll ran")
        // The map is untouched: the genuine delete still withdraws.
        let deleted = try await setup.handler.handle(messageJSON: try Self.push(#"{"delete":true,"nid":9}"#))
        #expect(deleted == .withdrew(raisedIdentifiers: ["kept-9"]))
    }

    @Test func theRouterRefusesAPushForNoRegisteredAccount() async throws {
        let setup = try await Setup()
        let keys = try #require(Self.keys)
        let router = NextcloudPushRouter()
        router.register(setup.handler, key: "token-alice")
        #expect(router.account(for: "token-alice") == GlueFixture.account)
        #expect(router.account(for: "token-other") == nil)
        let delete = try Self.push(#"{"delete-all":true}"#)
        await #expect(throws: PushRoutingError.unknownAccount) {
            try await router.route(messageJSON: delete, key: "token-other")
        }
        // By signature: the account's push is routed to it; one its key did not sign belongs to no account.
        let routed = try await router.route(messageJSON: delete)
        #expect(routed.account == GlueFixture.account && routed.handling == .withdrew(raisedIdentifiers: []))
        await #expect(throws: PushRoutingError.unknownAccount) {
            try await router.route(messageJSON: try Self.push(#"{"delete-all":true}"#, signer: keys.device))
        }
        // By key, a forged push is the account's typed error.
        await #expect(throws: NextcloudPushError.invalidSignature) {
            try await router.route(
                messageJSON: try Self.push(#"{"delete-all":true}"#, signer: keys.device), key: "token-alice")
        }
        router.remove(account: GlueFixture.account)
        await #expect(throws: PushRoutingError.unknownAccount) {
            try await router.route(messageJSON: delete, key: "token-alice")
        }
        await #expect(throws: PushRoutingError.unknownAccount) { try await router.route(messageJSON: delete) }
    }
}
