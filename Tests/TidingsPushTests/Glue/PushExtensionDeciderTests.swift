import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsPush

/// `MastodonPushExtensionDecider`: a notification extension's decision on the app's store file, with no engine
/// and no network, agrees with the app's raiser: the marker the engine stored suppresses, a group the poll
/// stored grows in place, and what the poll raised is not raised again (issue 12, audit item 7).
@Suite(.timeLimit(.minutes(1))) struct PushExtensionDeciderTests {
    /// The app: its store file (sealed with its cipher), its engine and raiser, its push subscription at the
    /// sandbox; the sandbox's pushes are captured by the fixture.
    struct App {
        let fixture: GlueFixture
        let folder: URL
        let path: String
        let cipher: ValueCipher
        let database: SQLiteDatabase
        let engine: MastodonAccountEngine
        let raiser: MastodonNotificationRaiser

        init() async throws {
            fixture = try await GlueFixture()
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("decider-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            path = folder.appendingPathComponent("store.sqlite").path
            cipher = try ValueCipher(key: .random())
            database = try await SQLiteDatabase.open(
                path: path, schema: GlueFixture.schema, configuration: .init(cipher: cipher))
            let client = GlueFixture.client(fixture.http, token: "alice-token")
            engine = MastodonAccountEngine(
                client: client, store: MastodonTimelineStore(database: database),
                capabilities: try await MastodonCapabilities.fetch(with: client), clock: fixture.clock)
            raiser = MastodonNotificationRaiser(
                engine: engine, policy: NotificationPolicyStore(database: database),
                clock: NotificationPolicyClock(fixture.clock, origin: GlueFixture.epoch),
                configuration: NotificationRaiserConfiguration(zone: .fixed(.zoneInfo(.utc))))
            let registrar = MastodonWebPushRegistrar(
                account: GlueFixture.account, database: database, cipher: cipher,
                client: MastodonPushSubscriptionClient(api: client))
            let status = await registrar.reconcile(endpoint: GlueFixture.endpoint, alerts: .personal, policy: .all)
            guard case .active = status else { throw PushRoutingError.unknownEndpoint }
        }

        /// The extension's decider on the app's file, deciding at the fixture's virtual now.
        var decider: MastodonPushExtensionDecider {
            let clock = fixture.clock
            return MastodonPushExtensionDecider(
                account: GlueFixture.account, path: path, schema: GlueFixture.schema, cipher: cipher,
                configuration: NotificationRaiserConfiguration(mode: .content, zone: .fixed(.zoneInfo(.utc))),
                now: { GlueFixture.epoch.addingTimeInterval(clock.now.offset.inSeconds) })
        }

        func decide(_ push: IncomingWebPush) async throws -> AccountNotificationDecision {
            let handling = try await decider.decide(push)
            guard case .decided(let decision) = handling else { throw Unexpected.handling("\(handling)") }
            return decision
        }

        func remove() {
            database.close()
            try? FileManager.default.removeItem(at: folder)
        }
    }

    enum Unexpected: Error { case handling(String) }

    @Test func aPushTheStoredMarkerCoversIsDropped() async throws {
        let app = try await App()
        defer { app.remove() }
        let mention = await app.fixture.server.post(
            as: app.fixture.bob, "@alice coffee?", mentioning: [app.fixture.alice])
        let push = try #require(await app.fixture.receivedPushes(1).first)
        // Read on another device: the engine learns the marker past the mention (as syncMarkers would store it).
        try await app.engine.pollNotifications()
        let stored = try #require(
            try await app.engine.notificationGroups().first { $0.group.statusID == ServerID(mention) })
        #expect(
            try await app.engine.markRead(.notifications, upTo: try #require(stored.group.mostRecentNotificationID)))
        #expect(try await app.decide(push).label == "drop:coveredByMarker")
    }

    @Test func aSecondFavouriteUpdatesTheStoredGroupInPlace() async throws {
        let app = try await App()
        defer { app.remove() }
        let status = await app.fixture.server.post(as: app.fixture.alice, "my post")
        try await app.fixture.favourite(status, by: "bob-token")
        _ = await app.fixture.receivedPushes(1)  // bob's push is lost: the app's poll raises his favourite
        let polled = try await app.raiser.pollAndRaise()
        #expect(polled.map(\.label) == ["raise"])
        let identifier = try #require(polled.first?.decision.request?.identifier)
        try await app.fixture.favourite(status, by: "carol-token")
        let push = try #require(await app.fixture.receivedPushes(2).last)
        let decided = try await app.decide(push)
        #expect(decided.label == "update")
        #expect(decided.decision.request?.identifier == identifier)
        #expect(decided.decision.request?.title.text == "carol favourited your post")
        // The app's next poll sees the grown group already shown.
        #expect(try await app.raiser.pollAndRaise().map(\.label) == ["drop:alreadyRaised"])
    }

    @Test func aPushThePollAlreadyRaisedIsNotRaisedAgain() async throws {
        let app = try await App()
        defer { app.remove() }
        _ = await app.fixture.server.post(as: app.fixture.bob, "@alice coffee?", mentioning: [app.fixture.alice])
        let push = try #require(await app.fixture.receivedPushes(1).first)
        #expect(try await app.raiser.pollAndRaise().map(\.label) == ["raise"])
        #expect(try await app.decide(push).label == "drop:alreadyRaised")
        // Nothing decodable: on Apple the generic notification, recorded as shown for the app to withdraw.
        var garbled = push
        garbled.body[garbled.body.count - 1] ^= 1
        guard case .unusable(_, let generic) = try await app.decider.decide(garbled) else {
            Issue.record("a tampered body was decided")
            return
        }
        #expect(generic?.identifier == "\(GlueFixture.account)#generic")
    }
}
