import Foundation
import TidingsCore
import TidingsMastodon

/// `NotificationReplyOutbox` sends the replies written in a notification ("Reply with text") through a durable
/// outbox, so that a reply typed in the notification extension survives the extension being killed, and the app
/// (or the extension's next run, from a second connection to the same store file) sends it.
///
/// Guarantees:
/// - The reply and its `Idempotency-Key` (a random UUID) are written in one transaction before anything is
///   sent; every attempt sends that same key, so a retry after an answer was lost never makes a second status
///   (Mastodon keeps the key for an hour).
/// - Transient failures (no answer, 5xx, 429) keep the reply for the next ``send()``, in order; a refusal
///   (another 4xx) removes it and reports it; nothing is retried forever: after ``maximumAttempts`` it is
///   removed and reported.
/// - Several connections may drain at once: a reply is claimed in a write transaction before it is sent, so
///   two processes never send it concurrently (a claim older than ``claimTimeout`` is taken over).
public struct NotificationReplyOutbox: Sendable {
    /// Attempts after which a reply that keeps failing transiently is given up.
    public static let maximumAttempts = 5
    /// How long a claim by a process that died mid-send holds the reply (seconds).
    public static let claimTimeout: TimeInterval = 120

    /// The durable table.
    public static let tables: [SQLiteSchema.Table] = [.durable("tidings_reply_outbox")]

    /// Creates the table; call it from one of the schema's migrations.
    ///
    /// - Throws: `StoreError` from SQLite.
    public static func createTables(_ db: SQLiteConnection) throws {
        try db.executeScript(
            """
            CREATE TABLE IF NOT EXISTS tidings_reply_outbox(
                id INTEGER PRIMARY KEY AUTOINCREMENT, account TEXT NOT NULL, in_reply_to TEXT NOT NULL,
                text TEXT NOT NULL, visibility TEXT NOT NULL, idempotency_key TEXT NOT NULL,
                attempts INTEGER NOT NULL DEFAULT 0, claimed_at REAL) STRICT;
            """)
    }

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
        /// Kept for the next ``send()`` (`reason`: the transient failure).
        case retryLater(reason: String)
        /// Refused for good, or given up after ``maximumAttempts``; removed.
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
        return try await database.write { db in
            try db.execute(
                """
                INSERT INTO tidings_reply_outbox(account, in_reply_to, text, visibility, idempotency_key)
                VALUES (?, ?, ?, ?, ?)
                """, [account, status, text, visibility, key])
            return Reply(
                id: db.lastInsertRowID, inReplyTo: status, text: text, visibility: visibility, idempotencyKey: key)
        }
    }

    /// The replies not yet posted, oldest first.
    ///
    /// - Throws: `StoreError` from SQLite.
    public func pending() async throws -> [Reply] {
        let account = client.accountKey
        return try await database.read { db in
            try db.fetchAll(
                "SELECT id, in_reply_to, text, visibility, idempotency_key FROM tidings_reply_outbox WHERE account = ? ORDER BY id",
                [account]
            ) { row in
                Reply(
                    id: try row[0], inReplyTo: try row[1], text: try row[2], visibility: try row[3],
                    idempotencyKey: try row[4])
            }
        }
    }

    /// Sends the queued replies in order, each with its own key; stops at the first transient failure so the
    /// order is kept.
    ///
    /// - Returns: Each attempted reply with its outcome.
    /// - Throws: `StoreError` from SQLite, `CancellationError`.
    public func send() async throws -> [(reply: Reply, outcome: Outcome)] {
        var results: [(reply: Reply, outcome: Outcome)] = []
        while let reply = try await claimNext() {
            let outcome = try await settle(reply, await attempt(reply))
            results.append((reply, outcome))
            if case .retryLater = outcome { break }
        }
        return results
    }

    private func claimNext() async throws -> Reply? {
        let account = client.accountKey
        let stamp = now().timeIntervalSince1970
        let stale = stamp - Self.claimTimeout
        return try await database.write { db in
            guard
                let reply = try db.fetchOne(
                    """
                    SELECT id, in_reply_to, text, visibility, idempotency_key FROM tidings_reply_outbox
                    WHERE account = ? ORDER BY id LIMIT 1
                    """, [account],
                    { row in
                        Reply(
                            id: try row[0], inReplyTo: try row[1], text: try row[2], visibility: try row[3],
                            idempotencyKey: try row[4])
                    })
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
        do {
            let response = try await client.send(
                .post, "/api/v1/statuses",
                form: [
                    ("status", reply.text), ("in_reply_to_id", reply.inReplyTo.rawValue),
                    ("visibility", reply.visibility),
                ], headers: [("Idempotency-Key", reply.idempotencyKey)])
            let status = try MastodonWire.decode(MastodonStatus.self, from: response.body)
            return .posted(status.id)
        } catch let error as MastodonError {
            switch error {
            case .transport, .server, .rateLimited: return .retryLater(reason: error.shortDescription)
            default: return .failed(reason: error.shortDescription)
            }
        } catch is CancellationError {
            return .retryLater(reason: "cancelled")
        } catch {
            return .failed(reason: "\(type(of: error))")
        }
    }

    /// Removes a settled reply, or releases it for the next run; the outcome as finally decided.
    private func settle(_ reply: Reply, _ outcome: Outcome) async throws -> Outcome {
        let maximum = Self.maximumAttempts
        return try await database.write { db in
            switch outcome {
            case .posted, .failed:
                try db.execute("DELETE FROM tidings_reply_outbox WHERE id = ?", [reply.id])
                return outcome
            case .retryLater(let reason):
                let attempts =
                    try db.fetchOne(Int.self, "SELECT attempts FROM tidings_reply_outbox WHERE id = ?", [reply.id]) ?? 0
                if attempts >= maximum {
                    try db.execute("DELETE FROM tidings_reply_outbox WHERE id = ?", [reply.id])
                    return .failed(reason: "gave up after \(attempts) attempts: \(reason)")
                }
                try db.execute("UPDATE tidings_reply_outbox SET claimed_at = NULL WHERE id = ?", [reply.id])
                return outcome
            }
        }
    }
}
