import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsNet
import TidingsPush
import TidingsSandbox
import TidingsSandboxKit

/// "Reply with text" from a notification: queued durably by one connection (the extension), sent by another
/// (the app) with one `Idempotency-Key` for every attempt, so a lost answer and its retry make one status.
@Suite(.timeLimit(.minutes(1))) struct ReplyOutboxTests {
    /// Forwards to the sandbox, and loses the answer of the first `count` posts of a status (the server made
    /// the status; the client never hears). Records every `Idempotency-Key` sent.
    final class LosingTransport: MastodonTransport {
        let inner: MastodonSandboxTransport
        let state = LockedState<(toLose: Int, keys: [String])>((0, []))
        init(_ http: SandboxHTTPServer, losing count: Int) {
            inner = MastodonSandboxTransport(server: http)
            state.withLock { $0.toLose = count }
        }
        func response(for request: HTTPRequest) async throws -> HTTPResponse {
            let response = try await inner.response(for: request)
            guard request.method == .post, request.url.path == "/api/v1/statuses" else { return response }
            let lose = state.withLock { state in
                state.keys.append(request.headers["Idempotency-Key"] ?? "")
                defer { state.toLose -= 1 }
                return state.toLose > 0
            }
            if lose { throw URLError(.networkConnectionLost) }
            return response
        }
    }

    private func open(_ path: String) async throws -> SQLiteDatabase {
        try await SQLiteDatabase.open(path: path, schema: GlueFixture.schema)
    }

    @Test func aReplyQueuedByOneConnectionIsPostedOnceByAnotherDespiteALostAnswer() async throws {
        let fixture = try await GlueFixture()
        let mention = await fixture.server.post(as: fixture.bob, "@alice coffee?", mentioning: [fixture.alice])
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("reply-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("store.sqlite").path
        let transport = LosingTransport(fixture.http, losing: 1)
        let client = MastodonAPIClient(
            server: URL(string: "https://sandbox.invalid")!, accountKey: GlueFixture.account,
            authorization: MastodonAuthorization(token: "alice-token"), transport: transport)

        // The extension queues the reply and is gone.
        let extensionDatabase = try await open(path)
        let queued = try await NotificationReplyOutbox(database: extensionDatabase, client: client).enqueue(
            replyTo: ServerID(mention), text: "yes, at 10")
        extensionDatabase.close()

        // The app sends it: the first answer is lost, the retry carries the same key.
        let appDatabase = try await open(path)
        defer { appDatabase.close() }
        let outbox = NotificationReplyOutbox(database: appDatabase, client: client)
        #expect(try await outbox.pending().map(\.idempotencyKey) == [queued.idempotencyKey])
        let first = try await outbox.send()
        #expect(first.count == 1)
        guard case .retryLater = first.first?.outcome else {
            Issue.record("not kept: \(first)")
            return
        }
        let second = try await outbox.send()
        guard case .posted(let id) = second.first?.outcome else {
            Issue.record("not posted: \(second)")
            return
        }
        #expect(try await outbox.pending().isEmpty)
        #expect(transport.state.withLock { $0.keys } == [queued.idempotencyKey, queued.idempotencyKey])
        // The server holds the mention and one reply to it: the retry made no second status.
        let mine = try await fixture.engine.client.status(id: id)
        #expect(mine.inReplyToID == ServerID(mention))
        #expect(await fixture.server.statusCount == 2)
    }

    @Test func aRefusedReplyIsRemovedAndReported() async throws {
        let fixture = try await GlueFixture()
        let outbox = NotificationReplyOutbox(database: fixture.database, client: fixture.engine.client)
        try await outbox.enqueue(replyTo: "404404", text: "to nowhere")
        let results = try await outbox.send()
        guard case .failed(let reason) = results.first?.outcome else {
            Issue.record("not refused: \(results)")
            return
        }
        #expect(reason.contains("notFound"))
        #expect(try await outbox.pending().isEmpty)
    }
}
