import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsNet
import TidingsPush
import TidingsSandbox
import TidingsSandboxKit

/// No reply typed by the person is thrown away: a refused token keeps it until sign-in, transient failures keep
/// it however many times (retried on the engine's outbox backoff), a 2xx that does not decode counts as posted,
/// and its text is sealed at rest when the store has a key.
@Suite(.timeLimit(.minutes(1))) struct ReplyOutboxKeepsTests {
    /// Forwards to the sandbox; the posts of a status get the answers queued in `script` first (a status code,
    /// or `-1`: the sandbox's answer with a body that is not JSON). Counts the posts sent.
    final class ScriptedPosts: MastodonTransport {
        let inner: MastodonSandboxTransport
        let state = LockedState<(script: [Int], posts: Int)>(([], 0))
        init(_ http: SandboxHTTPServer, _ script: [Int] = []) {
            inner = MastodonSandboxTransport(server: http)
            state.withLock { $0.script = script }
        }
        var posts: Int { state.withLock { $0.posts } }
        func response(for request: HTTPRequest) async throws -> HTTPResponse {
            guard request.method == .post, request.url.path == "/api/v1/statuses" else {
                return try await inner.response(for: request)
            }
            let next = state.withLock { state -> Int? in
                state.posts += 1
                return state.script.isEmpty ? nil : state.script.removeFirst()
            }
            switch next {
            case nil: return try await inner.response(for: request)
            case -1:
                let made = try await inner.response(for: request)
                return HTTPResponse(
                    status: made.status, headers: [:], body: Data("<html>ok</html>".utf8), url: request.url)
            case let status?:
                return HTTPResponse(status: status, headers: [:], body: Data("{}".utf8), url: request.url)
            }
        }
    }

    static func client(_ transport: ScriptedPosts, token: String = "alice-token") -> MastodonAPIClient {
        MastodonAPIClient(
            server: URL(string: "https://sandbox.invalid")!, accountKey: GlueFixture.account,
            authorization: MastodonAuthorization(token: token), transport: transport)
    }

    @Test func aRefusedTokenKeepsTheReplyUnsentUntilSignIn() async throws {
        let fixture = try await GlueFixture()
        let mention = await fixture.server.post(as: fixture.bob, "@alice lunch?", mentioning: [fixture.alice])
        let transport = ScriptedPosts(fixture.http)
        let client = Self.client(transport, token: "revoked-token")
        let outbox = NotificationReplyOutbox(database: fixture.database, client: client)
        let queued = try await outbox.enqueue(replyTo: ServerID(mention), text: "yes please")

        // The 401: kept, and the account now needs reauthentication.
        #expect(try await outbox.send().map(\.outcome) == [.waitingForSignIn])
        #expect(client.authorization.authState == .needsReauthentication)
        #expect(try await outbox.pending() == [queued])
        // While it needs reauthentication nothing is sent, however often it is asked.
        #expect(try await outbox.send().map(\.outcome) == [.waitingForSignIn])
        #expect(try await outbox.send().map(\.outcome) == [.waitingForSignIn])
        #expect(transport.posts == 1)
        #expect(try await outbox.pending() == [queued])

        client.authorization.signIn(token: "alice-token")
        guard case .posted = try await outbox.send().first?.outcome else {
            Issue.record("not posted after sign-in")
            return
        }
        #expect(try await outbox.pending().isEmpty)
        #expect(await fixture.server.statusCount == 2)
    }

    @Test func sendUntilEmptyWaitsForTheSignIn() async throws {
        let fixture = try await GlueFixture()
        let mention = await fixture.server.post(as: fixture.bob, "@alice lunch?", mentioning: [fixture.alice])
        let client = Self.client(ScriptedPosts(fixture.http), token: "revoked-token")
        let outbox = NotificationReplyOutbox(database: fixture.database, client: client)
        try await outbox.enqueue(replyTo: ServerID(mention), text: "yes please")
        let drain = Task { try await outbox.sendUntilEmpty(clock: fixture.clock) }
        while client.authorization.authState == .signedIn { await Task.yield() }
        client.authorization.signIn(token: "alice-token")
        let outcomes = try await drain.value.map(\.outcome)
        #expect(outcomes.first == .waitingForSignIn)
        guard case .posted = outcomes.last else {
            Issue.record("not posted: \(outcomes)")
            return
        }
        #expect(try await outbox.pending().isEmpty)
    }

    @Test func transientFailuresNeverDeleteTheReply() async throws {
        let fixture = try await GlueFixture()
        let mention = await fixture.server.post(as: fixture.bob, "@alice lunch?", mentioning: [fixture.alice])
        let transport = ScriptedPosts(fixture.http, Array(repeating: 503, count: 8))
        let outbox = NotificationReplyOutbox(database: fixture.database, client: Self.client(transport))
        let queued = try await outbox.enqueue(replyTo: ServerID(mention), text: "yes please")
        for _ in 0..<8 {
            guard case .retryLater = try await outbox.send().first?.outcome else {
                Issue.record("not kept after a 503")
                return
            }
            #expect(try await outbox.pending() == [queued])
        }
        guard case .posted = try await outbox.send().first?.outcome else {
            Issue.record("not posted once the server recovered")
            return
        }
        #expect(try await outbox.pending().isEmpty)
    }

    @Test func sendUntilEmptyRetriesOnTheEnginesBackoff() async throws {
        let fixture = try await GlueFixture()
        let mention = await fixture.server.post(as: fixture.bob, "@alice lunch?", mentioning: [fixture.alice])
        let transport = ScriptedPosts(fixture.http, [503, 500])
        let outbox = NotificationReplyOutbox(database: fixture.database, client: Self.client(transport))
        try await outbox.enqueue(replyTo: ServerID(mention), text: "yes please")
        let drain = Task { try await outbox.sendUntilEmpty(clock: fixture.clock) }
        await fixture.clock.waitForSleepers(1)
        #expect(transport.posts == 1)
        await fixture.clock.advance(by: .seconds(29))
        #expect(transport.posts == 1)
        await fixture.clock.advance(by: .seconds(1))
        await fixture.clock.waitForSleepers(1)
        #expect(transport.posts == 2)
        // The second wait doubles, as the engine's action outbox does.
        #expect(MastodonAccountEngine.outboxRetryDelay(afterFailures: 2) == .seconds(60))
        await fixture.clock.advance(by: .seconds(60))
        let outcomes = try await drain.value.map(\.outcome)
        #expect(transport.posts == 3)
        guard outcomes.count == 3, case .posted = outcomes[2] else {
            Issue.record("not posted on the third try: \(outcomes)")
            return
        }
        #expect(MastodonAccountEngine.outboxRetryDelay(afterFailures: 50) == .seconds(900))
    }

    @Test func aSuccessfulAnswerThatDoesNotDecodeCountsAsPosted() async throws {
        let fixture = try await GlueFixture()
        let mention = await fixture.server.post(as: fixture.bob, "@alice lunch?", mentioning: [fixture.alice])
        let transport = ScriptedPosts(fixture.http, [-1])
        let outbox = NotificationReplyOutbox(database: fixture.database, client: Self.client(transport))
        try await outbox.enqueue(replyTo: ServerID(mention), text: "yes please")
        #expect(try await outbox.send().map(\.outcome) == [.postedWithUnreadableAnswer])
        #expect(try await outbox.pending().isEmpty)
        #expect(try await outbox.send().isEmpty)
        #expect(transport.posts == 1)
        #expect(await fixture.server.statusCount == 2)
    }

    @Test func theReplyTextIsSealedAtRestWhenTheStoreHasAKey() async throws {
        let fixture = try await GlueFixture()
        let mention = await fixture.server.post(as: fixture.bob, "@alice lunch?", mentioning: [fixture.alice])
        let database = try SQLiteDatabase.inMemory(
            schema: GlueFixture.schema, configuration: .init(cipher: try ValueCipher(key: .random())))
        let outbox = NotificationReplyOutbox(database: database, client: Self.client(ScriptedPosts(fixture.http)))
        let secret = "meet me at the secret place"
        let queued = try await outbox.enqueue(replyTo: ServerID(mention), text: secret)
        let raw = try await database.read { db in
            try db.fetchAll("SELECT text, sealed_text FROM tidings_reply_outbox") { row -> (String, [UInt8]?) in
                (try row[0], try row[1])
            }
        }
        #expect(raw.count == 1)
        #expect(raw.first?.0 == "")
        let sealed = try #require(raw.first?.1)
        #expect(!sealed.isEmpty && !String(decoding: sealed, as: UTF8.self).contains("secret"))
        #expect(try await outbox.pending() == [queued])
        #expect(try await outbox.pending().first?.text == secret)
        guard case .posted(let id) = try await outbox.send().first?.outcome else {
            Issue.record("not posted")
            return
        }
        #expect(try await fixture.engine.client.status(id: id).content.contains(secret))
    }

    @Test func aStoreMadeBeforeSealingGetsTheColumnAndKeepsItsReplies() async throws {
        let database = try SQLiteDatabase.inMemory(
            schema: SQLiteSchema(
                tables: NotificationReplyOutbox.tables,
                migrations: [
                    .init(version: 1, name: "an older reply outbox") { db in
                        try db.executeScript(
                            """
                            CREATE TABLE tidings_reply_outbox(
                                id INTEGER PRIMARY KEY AUTOINCREMENT, account TEXT NOT NULL, in_reply_to TEXT NOT NULL,
                                text TEXT NOT NULL, visibility TEXT NOT NULL, idempotency_key TEXT NOT NULL,
                                attempts INTEGER NOT NULL DEFAULT 0, claimed_at REAL) STRICT;
                            INSERT INTO tidings_reply_outbox(account, in_reply_to, text, visibility, idempotency_key)
                            VALUES ('alice@sandbox', '1', 'typed before', 'public', 'k1');
                            """)
                    },
                    .init(version: 2, name: "sealed replies") { try NotificationReplyOutbox.createTables($0) },
                ]))
        let fixture = try await GlueFixture()
        let outbox = NotificationReplyOutbox(database: database, client: Self.client(ScriptedPosts(fixture.http)))
        #expect(try await outbox.pending().map(\.text) == ["typed before"])
    }
}
