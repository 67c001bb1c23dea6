import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsPush
import TidingsSandbox

/// A notification raised for a Nextcloud Social push before the app was relaunched is still withdrawn by the
/// `delete` or `delete-all` push that arrives after: the `nid` → raised map lives in the store file, and the
/// relaunched handler (a new store connection, engine, raiser) reads it. Once, across launches.
@Suite(.timeLimit(.minutes(1))) struct NextcloudRelaunchWithdrawalTests {
    static let schema = SQLiteSchema(
        tables: GlueFixture.schema.tables + [NextcloudRaisedNotifications.table],
        migrations: GlueFixture.schema.migrations + [
            .init(version: GlueFixture.schema.migrations.count + 1, name: "nextcloud map") { db in
                try NextcloudRaisedNotifications.createTable(db)
            }
        ])

    /// One launch of the app: its own connection to the file, engine, raiser and handler.
    struct Launch {
        let database: SQLiteDatabase
        let raiser: MastodonNotificationRaiser
        let handler: NextcloudPushHandler

        init(_ fixture: GlueFixture, path: String) async throws {
            database = try await SQLiteDatabase.open(path: path, schema: NextcloudRelaunchWithdrawalTests.schema)
            let client = GlueFixture.client(fixture.http, token: "alice-token")
            let engine = MastodonAccountEngine(
                client: client, store: MastodonTimelineStore(database: database),
                capabilities: try await MastodonCapabilities.fetch(with: client), clock: fixture.clock)
            raiser = MastodonNotificationRaiser(
                engine: engine, policy: NotificationPolicyStore(database: database),
                clock: NotificationPolicyClock(fixture.clock, origin: GlueFixture.epoch))
            let keys = try #require(NextcloudPushHandlerTests.keys)
            handler = NextcloudPushHandler(
                raiser: raiser,
                decryptor: NextcloudProxyPushDecryptor(deviceKey: keys.device, userPublicKey: keys.user.publicKey),
                raised: NextcloudRaisedNotifications(database: database))
        }

        /// The withdrawals the raiser published until now (a fence ends the read).
        func withdrawals(_ events: MastodonNotificationRaiser.AsyncStreamOfEvents) async -> [[String]] {
            await GlueFixture.withdrawals(publishedBy: raiser, events)
        }
    }

    @Test func deleteAndDeleteAllWithdrawAcrossARelaunchOnce() async throws {
        let fixture = try await GlueFixture(variant: .nextcloud)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nc-relaunch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("store.sqlite").path

        // First launch: two Social pushes, each raising its mention.
        let first = try await Launch(fixture, path: path)
        var raised: [String] = []
        for (nid, text) in [(Int64(41), "@alice one"), (42, "@alice two")] {
            await fixture.server.post(as: fixture.bob, text, mentioning: [fixture.alice])
            let push = try NextcloudPushHandlerTests.push(NextcloudPushHandlerTests.social(nid: nid))
            guard case .polled(nid, let decisions) = try await first.handler.handle(messageJSON: push) else {
                Issue.record("push \(nid) was not polled")
                return
            }
            raised += decisions.compactMap(\.decision.request?.identifier)
        }
        #expect(raised.count == 2)
        first.database.close()

        // Second launch: `delete` of the first withdraws it through the new raiser.
        let second = try await Launch(fixture, path: path)
        let secondEvents = second.raiser.events()
        let delete = try NextcloudPushHandlerTests.push(#"{"delete":true,"nid":41}"#)
        #expect(try await second.handler.handle(messageJSON: delete) == .withdrew(raisedIdentifiers: [raised[0]]))
        #expect(await second.withdrawals(secondEvents) == [[raised[0]]])
        second.database.close()

        // Third launch: the same delete again withdraws nothing; `delete-all` takes down the rest, once.
        let third = try await Launch(fixture, path: path)
        defer { third.database.close() }
        #expect(try await third.handler.handle(messageJSON: delete) == .withdrew(raisedIdentifiers: []))
        let deleteAll = try NextcloudPushHandlerTests.push(#"{"delete-all":true}"#)
        #expect(try await third.handler.handle(messageJSON: deleteAll) == .withdrew(raisedIdentifiers: [raised[1]]))
        #expect(try await third.handler.handle(messageJSON: deleteAll) == .withdrew(raisedIdentifiers: []))
    }
}
