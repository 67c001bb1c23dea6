import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsMastodon
import TidingsNet
import TidingsPush
import TidingsSandbox
import TidingsSandboxKit

/// The notification extension as a real second OS process (`Tests/PushExtensionChild`, spawned and reaped by
/// PeerSupport's `ChildProcess`, off the cooperative pool) on the app's store file, while the app — this test
/// process — holds its own connection and writes: what the child decides and records is shared through the file,
/// and the app's outboxes send each recorded action once.
@Suite(.timeLimit(.minutes(2))) struct ExtensionProcessTests {
    /// The app's side: its store file in a fresh folder, its engine and raiser on it, the sandbox in process.
    struct App {
        let fixture: GlueFixture
        let folder: URL
        let path: String
        let database: SQLiteDatabase
        let engine: MastodonAccountEngine
        let raiser: MastodonNotificationRaiser
        let mention: String
        let keys: WebPushSubscriptionKeys
        /// The widget snapshot file the app's board writes (what a widget extension reads).
        let widgetPath: String

        init() async throws {
            fixture = try await GlueFixture()
            mention = await fixture.server.post(as: fixture.bob, "@alice coffee?", mentioning: [fixture.alice])
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("extension-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            path = folder.appendingPathComponent("store.sqlite").path
            database = try await SQLiteDatabase.open(path: path, schema: GlueFixture.schema)
            let client = GlueFixture.client(fixture.http, token: "alice-token")
            engine = MastodonAccountEngine(
                client: client, store: MastodonTimelineStore(database: database),
                capabilities: try await MastodonCapabilities.fetch(with: client), clock: fixture.clock)
            widgetPath = folder.appendingPathComponent("widget.json").path
            raiser = MastodonNotificationRaiser(
                engine: engine, policy: NotificationPolicyStore(database: database),
                clock: NotificationPolicyClock(fixture.clock, origin: GlueFixture.epoch),
                board: NotificationWidgetBoard(path: widgetPath))
            keys = try WebPushSubscriptionKeys.generate()
        }

        func remove() {
            database.close()
            try? FileManager.default.removeItem(at: folder)
        }

        /// The mention's notification as Mastodon pushes it (`notification_id`, `notification_type`, `title`,
        /// `body`), encrypted for the subscription's keys as a server does, in a file for the child.
        func pushBodyFile() async throws -> (path: String, notificationID: String) {
            let notifications = try await GlueFixture.client(fixture.http, token: "alice-token").notifications()
            let notification = try #require(notifications.items.first { $0.status?.id == ServerID(mention) })
            let payload: JSONValue = .object([
                "notification_id": .string(notification.id.rawValue), "notification_type": "mention",
                "title": "bob mentioned you", "body": "@alice coffee?", "preferred_locale": "en",
            ])
            let message = try WebPushEncryptor.encrypt(
                Array(payload.jsonData()), receiverPublicKey: keys.publicKey, authSecret: keys.authSecret,
                encoding: .aes128gcm)
            let file = folder.appendingPathComponent("push-\(UUID().uuidString).bin").path
            try Data(message.body).write(to: URL(fileURLWithPath: file))
            return (file, notification.id.rawValue)
        }

        /// Runs the extension process to its end; its lines on standard output.
        func runExtension(_ arguments: [String]) async throws -> [String] {
            let executable = builtExecutable(named: "PushExtensionChild")
            var environment = ProcessInfo.processInfo.environment
            environment["TIDINGS_PUSH_PRIVATE_KEY"] = keys.base64URLPrivateKey
            environment["TIDINGS_PUSH_AUTH"] = keys.base64URLAuthSecret
            let outcome = try await ChildProcess.run(
                executable: executable.path, arguments: arguments, environment: environment, timeout: .seconds(60))
            let errors = String(decoding: outcome.standardError, as: UTF8.self)
            #expect(outcome.termination == .exited(0), "\(errors)")
            return String(decoding: outcome.standardOutput, as: UTF8.self).split(separator: "\n").map(String.init)
        }

        /// Writes to the store through the app's own connection until `stop` is set; returns how many commits (a
        /// failed write, e.g. a lock the child held too long, fails the task). The first commit is made before this
        /// returns, so the writes have begun when the child is spawned, whatever the scheduling.
        func keepWriting(until stop: LockedState<Bool>) async throws -> Task<Int, any Error> {
            let database = database
            @Sendable func beat(_ value: Int) async throws {
                try await database.write { db in
                    try db.execute(
                        "INSERT OR REPLACE INTO tidings_notification_state(account, key, value) VALUES (?, ?, ?)",
                        ["app", "heartbeat", String(value)])
                }
            }
            try await beat(0)
            return Task {
                var commits = 1
                while !stop.withLock({ $0 }) {
                    try await beat(commits)
                    commits += 1
                    await Task.yield()
                }
                return commits
            }
        }
    }

    @Test func theWidgetSnapshotTheAppWritesIsReadByAWidgetProcess() async throws {
        let app = try await App()
        defer { app.remove() }
        let raised = try await app.raiser.pollAndRaise()
        #expect(raised.map(\.label) == ["raise"])
        let lines = try await app.runExtension(["widget", app.widgetPath])
        #expect(lines == ["widget \(GlueFixture.account) unread 1 mentions @alice coffee?"])
        // The mention is read here: the app's next run writes a snapshot the widget process sees empty.
        _ = try await app.engine.markRead(.notifications, upTo: try #require(raised.first?.serverID))
        _ = try await app.raiser.raiseFromStore()
        #expect(
            try await app.runExtension(["widget", app.widgetPath]) == [
                "widget \(GlueFixture.account) unread 0 mentions "
            ])
    }

    @Test func aReplyAndAFavouriteRecordedByTheExtensionProcessAreSentOnceByTheApp() async throws {
        let app = try await App()
        defer { app.remove() }
        try await app.engine.pollNotifications()
        try await app.engine.refresh()
        let (body, notificationID) = try await app.pushBodyFile()

        // The extension process decides, then records what the person tapped, while the app writes.
        let stop = LockedState(false)
        let writer = try await app.keepWriting(until: stop)
        let lines = try await app.runExtension([
            "act", app.path, GlueFixture.account, body, app.mention, "yes, at 10",
        ])
        stop.withLock { $0 = true }
        #expect(try await writer.value > 0, "the app's writes all committed while the extension ran")
        #expect(lines.first == "decision raise \(GlueFixture.account)#notification:\(notificationID)")
        let replyLine = try #require(lines.first { $0.hasPrefix("reply ") }).split(separator: " ")
        let key = String(replyLine[2])
        #expect(lines.contains { $0.hasPrefix("favourite ") })

        // The raised set is shared: the app's poll does not raise what the extension raised.
        let decisions = try await app.raiser.raiseFromStore()
        #expect(decisions.map(\.label) == ["drop:alreadyRaised"])

        // The app's outboxes see both rows through its own connection and send each once; the reply's first answer
        // is lost, and its retry carries the key the extension stored.
        #expect(try await app.engine.pendingActions().map(\.action) == [.favourite])
        let transport = ReplyOutboxTests.LosingTransport(app.fixture.http, losing: 1)
        let replies = NotificationReplyOutbox(
            database: app.database,
            client: MastodonAPIClient(
                server: URL(string: "https://sandbox.invalid")!, accountKey: GlueFixture.account,
                authorization: MastodonAuthorization(token: "alice-token"), transport: transport))
        #expect(try await replies.pending().map(\.idempotencyKey) == [key])
        guard case .retryLater = try await replies.send().first?.outcome,
            case .posted(let replyID) = try await replies.send().first?.outcome
        else {
            Issue.record("the reply was not posted after one lost answer")
            return
        }
        #expect(try await replies.send().isEmpty)
        #expect(transport.state.withLock { $0.keys } == [key, key])
        await app.engine.replayOutbox()
        await app.engine.replayOutbox()
        #expect(try await app.engine.pendingActions().isEmpty)

        let favourites = app.fixture.http.log.entries.filter {
            $0.method == "POST" && $0.path == "/api/v1/statuses/\(app.mention)/favourite"
        }
        #expect(favourites.count == 1)
        let seen = try await GlueFixture.client(app.fixture.http, token: "alice-token").status(
            id: ServerID(app.mention))
        #expect(seen.favourited == true)
        let reply = try await app.engine.client.status(id: replyID)
        #expect(reply.inReplyToID == ServerID(app.mention))
        #expect(await app.fixture.server.statusCount == 2, "the mention and one reply: the retry made no second")
    }

    @Test func theExtensionProcessDecryptsAndDecidesWhileTheAppWrites() async throws {
        let app = try await App()
        defer { app.remove() }
        let (body, notificationID) = try await app.pushBodyFile()
        let stop = LockedState(false)
        let writer = try await app.keepWriting(until: stop)
        let first = try await app.runExtension(["decide", app.path, GlueFixture.account, body])
        // The same push again (a redelivery) from another process run: the raised set holds it.
        let second = try await app.runExtension(["decide", app.path, GlueFixture.account, body])
        stop.withLock { $0 = true }
        #expect(try await writer.value > 0)
        #expect(first == ["decision raise \(GlueFixture.account)#notification:\(notificationID)"])
        #expect(second == ["decision drop alreadyRaised"])

        // The app's poll and raiser, on their own connection, find it raised.
        try await app.engine.pollNotifications()
        #expect(try await app.raiser.raiseFromStore().map(\.label) == ["drop:alreadyRaised"])
        let state = try await NotificationPolicyStore(database: app.database).raisedState(
            for: NotificationCandidate(
                pushPayload: .object(["notification_id": .string(notificationID), "notification_type": "mention"]),
                account: GlueFixture.account)!)
        #expect(state.notificationRaised)
    }
}
