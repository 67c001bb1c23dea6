import Foundation
import TidingsCore
import TidingsMastodon
import TidingsNet

/// `NotificationReplyOutbox` sends the replies written in a notification ("Reply with text") through a durable
/// outbox, so that a reply typed in the notification extension survives the extension being killed, and the app
/// (or the extension's next run, from a second connection to the same store file) sends it.
///
/// Guarantees:
/// - The reply and its `Idempotency-Key` (a random UUID) are written in one transaction before anything is
///   sent; every attempt sends that same key, so a retry after an answer was lost never makes a second status
///   (Mastodon keeps the key for an hour).
/// - No reply the person typed is thrown away by a failure that is not the server's answer to it: transient
///   failures (no answer, a timeout, offline, 5xx, 429) keep it for the next ``send()``, in order, however many
///   times (``sendUntilEmpty(clock:)`` retries with the engine's outbox backoff,
///   `MastodonAccountEngine.outboxRetryDelay(afterFailures:)`); a refused token (401) or an account in
///   needs-reauthentication keeps it too, unsent, until the account signs in again (as the engine's action
///   outbox does). Only a refusal of the reply itself (another 4xx) removes it, and reports it with its text.
/// - A 2xx is a posted reply, even when its body does not decode (``Outcome/postedWithUnreadableAnswer``): the
///   server made the status, and sending it again would make a second one after the key's hour.
/// - The reply's text is sealed at rest with the database's `ValueCipher` when it has one (bound to its row,
///   as the timeline's payloads are).
/// - Several connections may drain at once: a reply is claimed in a write transaction before it is sent, so
///   two processes never send it concurrently (a claim older than ``claimTimeout`` is taken over).
public struct NotificationReplyOutbox: Sendable {
    /// How long a claim by a process that died mid-send holds the reply (seconds).
    public static let claimTimeout: TimeInterval = 120

    /// The durable table.
    public static let tables: [SQLiteSchema.Table] = [.durable("tidings_reply_outbox")]

    /// Creates the table, or adds what an older version's table lacks (the sealed text column); call it from one
    /// of the schema's migrations, and again from a later one when upgrading a store made before sealing.
    ///
    /// - Throws: `StoreError` from SQLite.
    public static func createTables(_ db: SQLiteConnection) throws {
        try db.executeScript(
            """
            CREATE TABLE IF NOT EXISTS tidings_reply_outbox(
                id INTEGER PRIMARY KEY AUTOINCREMENT, account TEXT NOT NULL, in_reply_to TEXT NOT NULL,
                text TEXT NOT NULL, visibility TEXT NOT NULL, idempotency_key TEXT NOT NULL,
                attempts INTEGER NOT NULL DEFAULT 0, claimed_at REAL, sealed_text BLOB) STRICT;
            """)
        let columns = try db.fetchAll(String.self, "SELECT name FROM pragma_table_info('tidings_reply_outbox')")
        if !columns.contains("sealed_text") {
            try db.execute("ALTER TABLE tidings_reply_outbox ADD COLUMN sealed_text BLOB")
        }
    }

    static let table = "tidings_reply_outbox"

    /// One queued reply.
    public struct Reply: Hashable, Sendable {
        /// The outbox row.
        public var id: Int64
        /// The status answered.
        public var inReplyTo: ServerID
        /// The text.
        public var text: String
        /// The visibility (`public`, `unlisted`, `private`, `direct`).
        public var visibility: String
        /// The key every attempt sends.
        public var idempotencyKey: String
    }

    /// What one reply's attempt came to.
    public enum Outcome: Hashable, Sendable {
        /// Posted: the server's status ID.
        case posted(ServerID)
        /// Posted (the server answered 2xx) but its answer did not decode, so the status ID is unknown; removed.
        case postedWithUnreadableAnswer
        /// Kept for the next ``send()`` (`reason`: the transient failure).
        case retryLater(reason: String)
        /// Kept, unsent: the account's token was refused or it needs reauthentication; sent after it signs in
        /// again.
        case waitingForSignIn
        /// Refused for good by the server (a 4xx other than 401 and 429); removed (the reply carries its text).
        case failed(reason: String)
    }

    let database: SQLiteDatabase
    let client: MastodonAPIClient
    let now: @Sendable () -> Date

    /// An outbox in `database` (whose schema includes ``tables``) sending as `client`'s account.
    public init(database: SQLiteDatabase, client: MastodonAPIClient, now: @escaping @Sendable () -> Date = { Date() }) {
        self.database = database
        self.client = client
        self.now = now
    }

    /// Queues a reply to `status` (its visibility by default the answered one's, or `public`).
    ///
    /// - Throws: `StoreError` from SQLite; nothing is queued then.
    @discardableResult
    public func enqueue(replyTo status: ServerID, text: String, visibility: String = "public") async throws -> Reply {
        let account = client.accountKey
        let key = UUID().uuidString
        let cipher = database.cipher
        return try await database.write { db in
            // Sealed under the row's own ID, so it is written after the row exists (one transaction).
            try db.execute(
                """
                INSERT INTO tidings_reply_outbox(account, in_reply_to, text, visibility, idempotency_key)
                VALUES (?, ?, ?, ?, ?)
                """, [account, status, cipher == nil ? text : "", visibility, key])
            let id = db.lastInsertRowID
            if let cipher {
                let sealed = try cipher.seal(text, table: Self.table, column: "text", rowID: id)
                try db.execute("UPDATE tidings_reply_outbox SET sealed_text = ? WHERE id = ?", [sealed, id])
            }
            return Reply(id: id, inReplyTo: status, text: text, visibility: visibility, idempotencyKey: key)
        }
    }

    /// A reply from a row of `id, in_reply_to, text, visibility, idempotency_key, sealed_text`.
    static func reply(_ row: SQLiteRow, cipher: ValueCipher?) throws -> Reply {
        let id: Int64 = try row[0]
        var text: String = try row[2]
        if let sealed: SealedValue = try row[5] {
            // Sealed under a key this connection was not given.
            guard let cipher else { throw StoreError.wrongKey }
            text = try cipher.openString(sealed, table: table, column: "text", rowID: id)
        }
        return Reply(
            id: id, inReplyTo: try row[1], text: text, visibility: try row[3], idempotencyKey: try row[4])
    }

    static let columns = "id, in_reply_to, text, visibility, idempotency_key, sealed_text"

    /// The replies not yet posted, oldest first.
    ///
    /// - Throws: `StoreError` from SQLite.
    public func pending() async throws -> [Reply] {
        let account = client.accountKey
        let cipher = database.cipher
        return try await database.read { db in
            try db.fetchAll(
                "SELECT \(Self.columns) FROM tidings_reply_outbox WHERE account = ? ORDER BY id", [account]
            ) { row in try Self.reply(row, cipher: cipher) }
        }
    }

    /// Sends the queued replies in order, each with its own key; stops at the first reply kept (a transient
    /// failure, or waiting for sign-in) so the order is kept. While the account needs reauthentication nothing
    /// is sent: the oldest reply is reported ``Outcome/waitingForSignIn``.
    ///
    /// - Returns: Each attempted reply with its outcome.
    /// - Throws: `StoreError` from SQLite, `CancellationError`.
    public func send() async throws -> [(reply: Reply, outcome: Outcome)] {
        var results: [(reply: Reply, outcome: Outcome)] = []
        while let reply = try await claimNext() {
            let outcome = try await settle(reply, await attempt(reply))
            results.append((reply, outcome))
            switch outcome {
            case .retryLater, .waitingForSignIn: return results
            default: continue
            }
        }
        return results
    }

    /// Sends until no reply is left: after a transient failure it waits the engine's outbox backoff
    /// (`MastodonAccountEngine.outboxRetryDelay(afterFailures:)`: 30 s doubling to 15 minutes, on `clock`), and
    /// while the account needs reauthentication it waits for the sign-in (`MastodonAuthorization.changes()`), as
    /// `MastodonSync` does for the engine's action outbox. Replies refused for good are removed on the way.
    ///
    /// - Parameter clock: The backoff's clock (a `TestClock` in tests).
    /// - Returns: Every attempt's outcome, in order.
    /// - Throws: `StoreError` from SQLite; `CancellationError` when the task is cancelled while waiting (the
    ///   replies stay queued).
    public func sendUntilEmpty(
        clock: any Clock<Duration> = ContinuousClock()
    ) async throws -> [(reply: Reply, outcome: Outcome)] {
        var results: [(reply: Reply, outcome: Outcome)] = []
        var failures = 0
        while true {
            // Subscribed before sending, so a sign-in between the refusal and the wait is not missed.
            let authChanges = client.authorization.changes()
            let round = try await send()
            results += round
            switch round.last?.outcome {
            case .retryLater:
                failures += 1
                try await clock.sleep(for: MastodonAccountEngine.outboxRetryDelay(afterFailures: failures))
            case .waitingForSignIn:
                for await _ in authChanges where client.authorization.authState == .signedIn { break }
                try Task.checkCancellation()
            default:
                if try await pending().isEmpty { return results }
                // Another connection holds the oldest reply's claim: ask again after the first delay.
                try await clock.sleep(for: MastodonAccountEngine.outboxRetryDelay(afterFailures: 1))
            }
        }
    }

    private func claimNext() async throws -> Reply? {
        let account = client.accountKey
        let stamp = now().timeIntervalSince1970
        let stale = stamp - Self.claimTimeout
        let cipher = database.cipher
        return try await database.write { db in
            guard
                let reply = try db.fetchOne(
                    "SELECT \(Self.columns) FROM tidings_reply_outbox WHERE account = ? ORDER BY id LIMIT 1",
                    [account], { row in try Self.reply(row, cipher: cipher) })
            else { return nil }
            // The oldest is claimed by another connection and still fresh: leave the queue to it (order).
            let claimed = try db.fetchOne(
                Double.self, "SELECT claimed_at FROM tidings_reply_outbox WHERE id = ? AND claimed_at > ?",
                [reply.id, stale])
            guard claimed == nil else { return nil }
            try db.execute(
                "UPDATE tidings_reply_outbox SET claimed_at = ?, attempts = attempts + 1 WHERE id = ?",
                [stamp, reply.id])
            return reply
        }
    }

    private func attempt(_ reply: Reply) async -> Outcome {
        guard client.authorization.authState == .signedIn else { return .waitingForSignIn }
        let response: HTTPResponse
        do {
            response = try await client.send(
                .post, "/api/v1/statuses",
                form: [
                    ("status", reply.text), ("in_reply_to_id", reply.inReplyTo.rawValue),
                    ("visibility", reply.visibility),
                ], headers: [("Idempotency-Key", reply.idempotencyKey)])
        } catch let error as MastodonError {
            switch error {
            case .unauthorized, .needsReauthentication: return .waitingForSignIn
            case .notFound, .badRequest, .conflict, .unsupported: return .failed(reason: error.shortDescription)
            default: return .retryLater(reason: error.shortDescription)
            }
        } catch {
            // Cancelled, or a failure without an answer: the reply is kept.
            return .retryLater(reason: error is CancellationError ? "cancelled" : "\(type(of: error))")
        }
        // A 2xx made the status; an answer that does not decode does not unmake it.
        guard let status = try? MastodonWire.decode(MastodonStatus.self, from: response.body) else {
            return .postedWithUnreadableAnswer
        }
        return .posted(status.id)
    }

    /// Removes a settled reply, or releases it for the next run; the outcome as finally decided.
    private func settle(_ reply: Reply, _ outcome: Outcome) async throws -> Outcome {
        try await database.write { db in
            switch outcome {
            case .posted, .postedWithUnreadableAnswer, .failed:
                try db.execute("DELETE FROM tidings_reply_outbox WHERE id = ?", [reply.id])
            case .retryLater:
                try db.execute("UPDATE tidings_reply_outbox SET claimed_at = NULL WHERE id = ?", [reply.id])
            case .waitingForSignIn:
                // Not an attempt: nothing reached the server.
                try db.execute(
                    "UPDATE tidings_reply_outbox SET claimed_at = NULL, attempts = max(0, attempts - 1) WHERE id = ?",
                    [reply.id])
            }
            return outcome
        }
    }
}
