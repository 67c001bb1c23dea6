import Foundation
import TidingsCore

/// The message cache in SQLite, encrypted at rest with the app's key.
///
/// One row per (conversation, message ID) in the disposable table `kecalek_messages`: the sender,
/// payload, reactions and pin live in one value sealed with AES-256-GCM bound to its table, column and
/// row (a value copied to another row does not open). IDs, `created_at` and whether a row is a control
/// message stay in clear so that the newest page and `after_ts` are index lookups. `read_by` is never
/// stored. Every ``write(_:)`` is one SQLite transaction.
///
/// For example:
///
/// ```swift
/// let cache = try KecalekSQLiteCache(path: storeURL.path, key: appKey)
/// let newest = try cache.newestMessages(conversationID: "general", limit: 50)
/// ```
public final class KecalekSQLiteCache: KecalekMessageCache {
    /// The store underneath (shared with other tables of the app if it wants).
    public let database: Database
    private let cipher: ValueCipher
    static let table = "kecalek_messages"

    /// The store's queue: a client on it reads and writes SQLite (busy waits, large writes) off the pool.
    public var executor: DatabaseExecutor? { database.executor }

    /// The tables and migrations of the cache.
    public static let schema = DatabaseSchema(
        tables: [.disposable(table), .disposable("kecalek_sync_points"), .durable("kecalek_pending_reads")],
        migrations: [
            .init(version: 1, name: "kecalek messages") { db in
                try db.executeScript(
                    """
                    CREATE TABLE kecalek_messages(
                        conversation_id TEXT NOT NULL,
                        message_id TEXT NOT NULL,
                        created_us INTEGER NOT NULL,
                        created_at TEXT NOT NULL,
                        is_control INTEGER NOT NULL,
                        body BLOB NOT NULL,
                        PRIMARY KEY (conversation_id, message_id)
                    ) WITHOUT ROWID;
                    CREATE INDEX kecalek_messages_newest ON kecalek_messages(conversation_id, created_us);
                    CREATE INDEX kecalek_messages_visible
                        ON kecalek_messages(conversation_id, is_control, created_us, message_id);
                    """)
            },
            // Where each conversation's last complete sync left off; disposable like the messages it
            // describes (both go when a damaged file is replaced, and the next open fetches in full).
            .init(version: 2, name: "kecalek sync points") { db in
                try db.executeScript(
                    """
                    CREATE TABLE kecalek_sync_points(
                        conversation_id TEXT PRIMARY KEY NOT NULL,
                        point_us INTEGER NOT NULL,
                        point_text TEXT NOT NULL,
                        largest_page INTEGER NOT NULL
                    ) WITHOUT ROWID;
                    """)
            },
            // `mark_read`s the server has not accepted yet: durable, since losing one leaves a message
            // unread on every device for good.
            .init(version: 3, name: "kecalek pending reads") { db in
                try db.executeScript(
                    """
                    CREATE TABLE kecalek_pending_reads(
                        conversation_id TEXT NOT NULL,
                        message_id TEXT NOT NULL,
                        added INTEGER NOT NULL,
                        PRIMARY KEY (conversation_id, message_id)
                    ) WITHOUT ROWID;
                    """)
            },
        ])

    /// Opens (creating with mode 0600 if needed) the cache at `path`, encrypted with `key`.
    ///
    /// - Parameters:
    ///   - path: A file path, or `":memory:"`.
    ///   - key: The app's 256-bit key (the document: the identity key).
    /// - Throws: ``StoreError/wrongKey`` when the file was written with another key; other ``StoreError``s
    ///   when the file cannot be opened. A damaged file is replaced by an empty cache (reported in
    ///   `database.openReport`), since the server has the data.
    public init(path: String, key: SymmetricKey, logger: Logger = .disabled) throws {
        cipher = try ValueCipher(key: key)
        database = try Database(
            path: path, schema: Self.schema, configuration: .init(logger: logger, cipher: cipher))
    }

    /// Runs `body` in one transaction; see ``KecalekMessageCache/write(_:)``.
    public func write<T>(_ body: (any KecalekCacheWriter) throws -> T) throws -> T {
        try database.write { db in try body(Writer(db: db, cipher: cipher)) }
    }

    /// The newest `limit` non-control messages, oldest first.
    public func newestMessages(conversationID: String, limit: Int) throws -> [KecalekMessage] {
        try database.read { db in
            var rows: [KecalekMessage] = []
            rows.reserveCapacity(max(0, min(limit, 1000)))
            try db.forEachRow(
                """
                SELECT message_id, created_us, created_at, body FROM kecalek_messages
                WHERE conversation_id = ? AND is_control = 0
                ORDER BY created_us DESC, message_id DESC LIMIT ?
                """, [conversationID, max(0, limit)]
            ) { row in
                rows.append(try Self.decode(row, conversationID: conversationID, cipher: cipher))
            }
            return rows.reversed()
        }
    }

    /// The newest `created_at`, control messages included.
    public func newestTimestamp(conversationID: String) throws -> KecalekTimestamp? {
        try database.read { db in
            try db.fetchOne(
                "SELECT created_us, created_at FROM kecalek_messages WHERE conversation_id = ? ORDER BY created_us DESC LIMIT 1",
                [conversationID]
            ) { row in try Self.timestamp(row, usIndex: 0, textIndex: 1) }
        }
    }

    /// Where the last complete sync left off; see ``KecalekMessageCache/syncState(conversationID:)``.
    public func syncState(conversationID: String) throws -> KecalekSyncState? {
        try database.read { db in
            try db.fetchOne(
                "SELECT point_us, point_text, largest_page FROM kecalek_sync_points WHERE conversation_id = ?",
                [conversationID]
            ) { row in
                KecalekSyncState(point: try Self.timestamp(row, usIndex: 0, textIndex: 1), largestPage: try row[2])
            }
        }
    }

    /// Rows whose sealed body does not open; see ``KecalekMessageCache/damagedRows(conversationID:)``.
    public func damagedRows(conversationID: String) throws -> [KecalekDamagedRow] {
        try database.read { db in
            var damaged: [KecalekDamagedRow] = []
            try db.forEachRow(
                """
                SELECT message_id, created_us, created_at, body FROM kecalek_messages
                WHERE conversation_id = ? ORDER BY created_us, message_id
                """, [conversationID]
            ) { row in
                if (try? Self.decode(row, conversationID: conversationID, cipher: cipher)) == nil {
                    damaged.append(
                        KecalekDamagedRow(
                            messageID: try row[0], createdAt: try Self.timestamp(row, usIndex: 1, textIndex: 2)))
                }
            }
            return damaged
        }
    }

    /// The pending `mark_read` IDs; see ``KecalekMessageCache/pendingReads(conversationID:)``.
    public func pendingReads(conversationID: String) throws -> [String] {
        try database.read { db in
            try db.fetchAll(
                String.self,
                "SELECT message_id FROM kecalek_pending_reads WHERE conversation_id = ? ORDER BY added, message_id",
                [conversationID])
        }
    }

    /// The number of cached rows of the conversation.
    public func messageCount(conversationID: String) throws -> Int {
        try database.read { db in
            try db.fetchOne(
                Int.self, "SELECT count(*) FROM kecalek_messages WHERE conversation_id = ?", [conversationID])
                ?? 0
        }
    }

    /// One cached message, or nil.
    public func message(conversationID: String, messageID: String) throws -> KecalekMessage? {
        try database.read { db in
            try Writer(db: db, cipher: cipher).message(conversationID: conversationID, messageID: messageID)
        }
    }

    /// Every cached conversation, by ID.
    public func conversations() throws -> [KecalekCachedConversation] {
        try database.read { db in
            try db.fetchAll(
                """
                SELECT m.conversation_id, count(*), max(m.created_us),
                    (SELECT created_at FROM kecalek_messages n WHERE n.conversation_id = m.conversation_id
                     ORDER BY n.created_us DESC LIMIT 1)
                FROM kecalek_messages m GROUP BY m.conversation_id ORDER BY m.conversation_id
                """
            ) { row in
                KecalekCachedConversation(
                    conversationID: try row[0], messageCount: try row[1],
                    newest: try Self.timestamp(row, usIndex: 2, textIndex: 3))
            }
        }
    }

    // MARK: Rows

    static func rowKey(_ conversationID: String, _ messageID: String) -> String {
        // Length-prefixed, so ("a/b", "c") and ("a", "b/c") never share a key.
        "\(conversationID.utf8.count):\(conversationID)/\(messageID)"
    }

    static func timestamp(_ row: Row, usIndex: Int, textIndex: Int) throws -> KecalekTimestamp {
        let micros: Int64 = try row[usIndex]
        let text: String = try row[textIndex]
        let parsed = KecalekTimestamp(text)
        return parsed?.microseconds == micros
            ? parsed ?? KecalekTimestamp(microseconds: micros) : KecalekTimestamp(microseconds: micros)
    }

    static func decode(_ row: Row, conversationID: String, cipher: ValueCipher) throws -> KecalekMessage {
        let messageID: String = try row[0]
        let createdAt = try timestamp(row, usIndex: 1, textIndex: 2)
        let sealed: SealedValue = try row[3]
        let body = try cipher.open(sealed, table: table, column: "body", rowID: rowKey(conversationID, messageID))
        var reader = BodyReader(buffer: body)
        let senderID = try reader.string()
        let payload = try reader.slice()
        let pinned = try reader.byte() == 1
        let count = try reader.uint32()
        var reactions: [KecalekReaction] = []
        reactions.reserveCapacity(Int(min(count, 64)))
        for _ in 0..<count {
            reactions.append(KecalekReaction(userID: try reader.string(), emoji: try reader.string()))
        }
        return KecalekMessage(
            messageID: messageID, conversationID: conversationID, senderID: senderID, createdAt: createdAt,
            payload: Data(payload), reactions: reactions, pinned: pinned)
    }

    static func encodeBody(_ message: KecalekMessage) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(message.payload.count + 64)
        func append(_ value: UInt32) { withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) } }
        func append(_ part: some Collection<UInt8>) {
            append(UInt32(part.count))
            bytes.append(contentsOf: part)
        }
        append(Array(message.senderID.utf8))
        append(message.payload)
        bytes.append(message.pinned ? 1 : 0)
        append(UInt32(message.reactions.count))
        for reaction in message.reactions {
            append(Array(reaction.userID.utf8))
            append(Array(reaction.emoji.utf8))
        }
        return bytes
    }

    private struct BodyReader {
        let buffer: [UInt8]
        var index = 0

        mutating func byte() throws -> UInt8 {
            guard index < buffer.count else { throw Self.truncated }
            defer { index += 1 }
            return buffer[index]
        }

        mutating func uint32() throws -> UInt32 {
            guard index + 4 <= buffer.count else { throw Self.truncated }
            defer { index += 4 }
            return buffer[index..<(index + 4)].reduce(0) { $0 << 8 | UInt32($1) }
        }

        mutating func slice() throws -> ArraySlice<UInt8> {
            let count = Int(try uint32())
            guard count <= buffer.count - index else { throw Self.truncated }
            defer { index += count }
            return buffer[index..<(index + count)]
        }

        mutating func string() throws -> String { String(decoding: try slice(), as: UTF8.self) }

        static var truncated: KecalekError {
            KecalekError(.cache, operation: "cache.read", detail: "truncated row body")
        }
    }

    private struct Writer: KecalekCacheWriter {
        let db: DatabaseConnection
        let cipher: ValueCipher

        func upsert(_ message: KecalekMessage) throws -> Bool {
            let key = KecalekSQLiteCache.rowKey(message.conversationID, message.messageID)
            let sealed = try cipher.seal(
                KecalekSQLiteCache.encodeBody(message), table: KecalekSQLiteCache.table, column: "body", rowID: key)
            // Insert when absent (the common case of a fetch), update in place otherwise.
            try db.execute(
                """
                INSERT OR IGNORE INTO kecalek_messages(conversation_id, message_id, created_us, created_at, is_control, body)
                VALUES (?, ?, ?, ?, ?, ?)
                """,
                [
                    message.conversationID, message.messageID, message.createdAt.microseconds, message.createdAt.text,
                    message.isControl ? 1 : 0, sealed,
                ])
            if db.changes > 0 { return true }
            try db.execute(
                """
                UPDATE kecalek_messages SET created_us = ?, created_at = ?, is_control = ?, body = ?
                WHERE conversation_id = ? AND message_id = ?
                """,
                [
                    message.createdAt.microseconds, message.createdAt.text, message.isControl ? 1 : 0, sealed,
                    message.conversationID, message.messageID,
                ])
            return false
        }

        func delete(conversationID: String, messageIDs: [String]) throws -> [String] {
            var removed: [String] = []
            for id in messageIDs {
                try db.execute(
                    "DELETE FROM kecalek_messages WHERE conversation_id = ? AND message_id = ?", [conversationID, id])
                if db.changes > 0 { removed.append(id) }
            }
            return removed
        }

        func setReactions(_ reactions: [KecalekReaction], conversationID: String, messageID: String) throws -> Bool {
            guard var message = try message(conversationID: conversationID, messageID: messageID) else { return false }
            message.reactions = reactions
            _ = try upsert(message)
            return true
        }

        func setPinned(_ pinned: Bool, conversationID: String, messageID: String) throws -> Bool {
            guard var message = try message(conversationID: conversationID, messageID: messageID) else { return false }
            message.pinned = pinned
            _ = try upsert(message)
            return true
        }

        func setSyncState(_ state: KecalekSyncState, conversationID: String) throws {
            try db.execute(
                """
                INSERT OR REPLACE INTO kecalek_sync_points(conversation_id, point_us, point_text, largest_page)
                VALUES (?, ?, ?, ?)
                """, [conversationID, state.point.microseconds, state.point.text, state.largestPage])
        }

        func addPendingReads(_ messageIDs: [String], conversationID: String) throws {
            let next =
                try db.fetchOne(
                    Int64.self,
                    "SELECT coalesce(max(added), 0) + 1 FROM kecalek_pending_reads WHERE conversation_id = ?",
                    [conversationID]) ?? 1
            for id in messageIDs {
                try db.execute(
                    "INSERT OR IGNORE INTO kecalek_pending_reads(conversation_id, message_id, added) VALUES (?, ?, ?)",
                    [conversationID, id, next])
            }
        }

        func removePendingReads(_ messageIDs: [String], conversationID: String) throws {
            for id in messageIDs {
                try db.execute(
                    "DELETE FROM kecalek_pending_reads WHERE conversation_id = ? AND message_id = ?",
                    [conversationID, id])
            }
        }

        func message(conversationID: String, messageID: String) throws -> KecalekMessage? {
            try db.fetchOne(
                """
                SELECT message_id, created_us, created_at, body FROM kecalek_messages
                WHERE conversation_id = ? AND message_id = ?
                """, [conversationID, messageID]
            ) { row in try KecalekSQLiteCache.decode(row, conversationID: conversationID, cipher: cipher) }
        }
    }
}
