import Foundation
import TidingsCore

/// The message cache in SQLite, encrypted at rest with the app's key.
///
/// One row per (conversation, message ID) in the disposable table `kecalek_messages`, with four columns:
/// `conversation_tag` and `message_tag` (keyed HMACs of the IDs, `KecalekCacheTags`), `created_us` (the
/// message's instant, in clear, so the newest page and `after_ts` are index lookups), and `body`: the IDs,
/// `created_at` text, control flag, sender, payload, reactions and pin sealed with AES-256-GCM bound to the
/// row's tag (a value copied to another row does not open) and padded to 64 bytes. Without the key the file
/// shows how many conversations there are, how many rows each has, each row's instant, and each body's size
/// to within 64 bytes; docs/backends/kecalek.md says why the instant stays. `read_by` is never stored. Every
/// ``write(_:)`` is one SQLite transaction.
///
/// For example:
///
/// ```swift
/// let cache = try KecalekSQLiteCache(path: storeURL.path, key: appKey)
/// let newest = try cache.newestMessages(conversationID: "general", limit: 50)
/// ```
public final class KecalekSQLiteCache: KecalekMessageCache {
    /// The store underneath (shared with other tables of the app if it wants).
    public let database: SQLiteDatabase
    private let cipher: ValueCipher
    private let tags: KecalekCacheTags
    static let table = "kecalek_messages"

    /// The store's queue: a client on it reads and writes SQLite (busy waits, large writes) off the pool.
    public var executor: SQLiteExecutor? { database.executor }

    /// The tables and migrations of the cache. Version 2 rebuilds the (disposable) table without any ID in
    /// clear: the server has the data, and the next sync refills it. `secure_delete` zeroes the old rows' pages,
    /// so the plaintext IDs of version 1 do not linger in the file's free pages.
    public static let schema = SQLiteSchema(
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
                    """)
            },
            .init(version: 2, name: "kecalek messages keyed by tags") { db in
                try db.executeScript(
                    """
                    PRAGMA secure_delete = ON;
                    DROP TABLE IF EXISTS kecalek_messages;
                    CREATE TABLE kecalek_messages(
                        conversation_tag BLOB NOT NULL,
                        message_tag BLOB NOT NULL,
                        created_us INTEGER NOT NULL,
                        body BLOB NOT NULL,
                        PRIMARY KEY (conversation_tag, message_tag)
                    ) WITHOUT ROWID;
                    CREATE INDEX kecalek_messages_newest ON kecalek_messages(conversation_tag, created_us);
                    """)
            },
            // Where each conversation's last complete sync left off; disposable like the messages it
            // describes (both go when a damaged file is replaced, and the next open fetches in full). Keyed by
            // the conversation's tag; the point and page size are sealed.
            .init(version: 3, name: "kecalek sync points") { db in
                try db.executeScript(
                    """
                    CREATE TABLE kecalek_sync_points(
                        conversation_tag BLOB PRIMARY KEY NOT NULL,
                        body BLOB NOT NULL
                    ) WITHOUT ROWID;
                    """)
            },
            // `mark_read`s the server has not accepted yet: durable, since losing one leaves a message
            // unread on every device for good. Keyed by tags; the message ID is sealed.
            .init(version: 4, name: "kecalek pending reads") { db in
                try db.executeScript(
                    """
                    CREATE TABLE kecalek_pending_reads(
                        conversation_tag BLOB NOT NULL,
                        message_tag BLOB NOT NULL,
                        added INTEGER NOT NULL,
                        body BLOB NOT NULL,
                        PRIMARY KEY (conversation_tag, message_tag)
                    ) WITHOUT ROWID;
                    """)
            },
        ])

    /// Opens (creating with mode 0600 if needed) the cache at `path`, encrypted with `key`.
    ///
    /// - Parameters:
    ///   - path: A file path, or `":memory:"`.
    ///   - key: The app's 256-bit key (the document: the identity key).
    ///   - logger: Receives the store's notices (recovery, migrations); never message content.
    ///   - readOnly: Opens an existing file without creating, migrating, moving or replacing anything
    ///     (`SQLiteDatabase.Configuration.readOnly`); writes then fail.
    /// - Throws: `StoreError.wrongKey` when the file was written with another key; other `StoreError`s
    ///   when the file cannot be opened. Read-write, a damaged file is replaced by an empty cache (reported in
    ///   `database.openReport`), since the server has the data; read-only, damage throws and the file stays.
    public init(
        path: String, key: TidingsCrypto.SymmetricKey, logger: TidingsLogger = .disabled, readOnly: Bool = false
    ) throws {
        cipher = try ValueCipher(key: key)
        tags = try KecalekCacheTags(storeKey: key)
        database = try SQLiteDatabase(
            path: path, schema: Self.schema, configuration: .init(logger: logger, cipher: cipher, readOnly: readOnly))
        if !readOnly {
            // Deleted and replaced rows are zeroed on disk rather than left in free pages, so a deleted
            // message's tags and sealed body leave the file (once the WAL is checkpointed).
            try database.writeWithoutTransaction { db in try db.execute("PRAGMA secure_delete = ON") }
        }
    }

    /// Opens the cache like ``init(path:key:logger:readOnly:)`` on a dispatch queue of its own, since opening
    /// reads every page and may wait for a lock: callers on Swift's cooperative pool use this.
    public static func open(
        path: String, key: TidingsCrypto.SymmetricKey, logger: TidingsLogger = .disabled, readOnly: Bool = false
    ) async throws -> KecalekSQLiteCache {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue(label: "tidings.kecalek.open").async {
                continuation.resume(
                    with: Result { try KecalekSQLiteCache(path: path, key: key, logger: logger, readOnly: readOnly) })
            }
        }
    }

    /// Runs `body` in one transaction; see ``KecalekMessageCache/write(_:)``.
    public func write<T>(_ body: (any KecalekCacheWriter) throws -> T) throws -> T {
        try database.write { db in try body(Writer(db: db, cipher: cipher, tags: tags)) }
    }

    /// The newest `limit` non-control messages, oldest first.
    ///
    /// Control messages are only known once opened, so rows are read newest first until `limit` visible ones
    /// are found, plus any row sharing the last one's instant (equal instants order by message ID, as in
    /// ``KecalekMemoryCache``).
    public func newestMessages(conversationID: String, limit: Int) throws -> [KecalekMessage] {
        guard limit > 0 else { return [] }
        return try database.read { db in
            var rows: [KecalekMessage] = []
            rows.reserveCapacity(min(limit, 1000))
            var boundary: Int64?
            do {
                try db.forEachRow(
                    """
                    SELECT created_us, message_tag, body FROM kecalek_messages
                    WHERE conversation_tag = ? ORDER BY created_us DESC
                    """, [tags.conversation(conversationID)]
                ) { row in
                    let micros: Int64 = try row[0]
                    if let boundary, micros < boundary { throw Enough() }
                    let contents = try open(row, tagIndex: 1, bodyIndex: 2, conversationID: conversationID)
                    guard !contents.isControl else { return }
                    rows.append(contents.message)
                    if rows.count == limit { boundary = micros }
                }
            } catch is Enough {}
            rows.sort(by: KecalekMemoryCache.order)
            return Array(rows.suffix(limit))
        }
    }

    /// The newest `created_at`, control messages included.
    public func newestTimestamp(conversationID: String) throws -> KecalekTimestamp? {
        try database.read { db in
            try db.fetchOne(
                """
                SELECT message_tag, body FROM kecalek_messages WHERE conversation_tag = ?
                ORDER BY created_us DESC LIMIT 1
                """, [tags.conversation(conversationID)]
            ) { row in try open(row, tagIndex: 0, bodyIndex: 1, conversationID: conversationID).message.createdAt }
        }
    }

    /// Where the last complete sync left off; see ``KecalekMessageCache/syncState(conversationID:)``.
    public func syncState(conversationID: String) throws -> KecalekSyncState? {
        try database.read { db in
            let tag = tags.conversation(conversationID)
            return try db.fetchOne(
                "SELECT body FROM kecalek_sync_points WHERE conversation_tag = ?", [tag]
            ) { row in
                let sealed: SealedValue = try row[0]
                return try KecalekSealedSyncState.decode(
                    cipher.open(sealed, table: "kecalek_sync_points", column: "body", rowID: tag))
            }
        }
    }

    /// Rows whose sealed body does not open; see ``KecalekMessageCache/damagedRows(conversationID:)``. Their
    /// message IDs are sealed with them, so each is named by its message tag and dated by its clear instant.
    public func damagedRows(conversationID: String) throws -> [KecalekDamagedRow] {
        try database.read { db in
            var damaged: [KecalekDamagedRow] = []
            try db.forEachRow(
                """
                SELECT message_tag, body, created_us FROM kecalek_messages
                WHERE conversation_tag = ? ORDER BY created_us, message_tag
                """, [tags.conversation(conversationID)]
            ) { row in
                if (try? open(row, tagIndex: 0, bodyIndex: 1, conversationID: conversationID)) == nil {
                    damaged.append(
                        KecalekDamagedRow(
                            messageID: nil, createdAt: KecalekTimestamp(microseconds: try row[2]),
                            storageKey: try row[0]))
                }
            }
            return damaged
        }
    }

    /// The pending `mark_read` IDs; see ``KecalekMessageCache/pendingReads(conversationID:)``.
    public func pendingReads(conversationID: String) throws -> [String] {
        try database.read { db in
            try db.fetchAll(
                """
                SELECT message_tag, body FROM kecalek_pending_reads WHERE conversation_tag = ?
                ORDER BY added, message_tag
                """, [tags.conversation(conversationID)]
            ) { row in
                let tag: [UInt8] = try row[0]
                let sealed: SealedValue = try row[1]
                return String(
                    decoding: try cipher.open(sealed, table: "kecalek_pending_reads", column: "body", rowID: tag),
                    as: UTF8.self)
            }
        }
    }

    /// The number of cached rows of the conversation.
    public func messageCount(conversationID: String) throws -> Int {
        try database.read { db in
            try db.fetchOne(
                Int.self, "SELECT count(*) FROM kecalek_messages WHERE conversation_tag = ?",
                [tags.conversation(conversationID)]) ?? 0
        }
    }

    /// One cached message, or nil.
    public func message(conversationID: String, messageID: String) throws -> KecalekMessage? {
        try database.read { db in
            try Writer(db: db, cipher: cipher, tags: tags).message(conversationID: conversationID, messageID: messageID)
        }
    }

    /// Every cached conversation, by ID: the IDs are only in the sealed bodies, so each conversation's newest
    /// row is opened.
    public func conversations() throws -> [KecalekCachedConversation] {
        try database.read { db in
            let groups = try db.fetchAll(
                "SELECT conversation_tag, count(*) FROM kecalek_messages GROUP BY conversation_tag"
            ) { row in (tag: try row[0] as [UInt8], count: try row[1] as Int) }
            return try groups.map { group in
                let newest = try db.fetchOne(
                    """
                    SELECT message_tag, body FROM kecalek_messages WHERE conversation_tag = ?
                    ORDER BY created_us DESC LIMIT 1
                    """, [group.tag]
                ) { row in try open(row, tagIndex: 0, bodyIndex: 1, conversationID: nil).message }
                guard let newest, tags.conversation(newest.conversationID) == group.tag else {
                    throw KecalekError(
                        .cache, operation: "cache.read", detail: "a row is filed under another conversation")
                }
                return KecalekCachedConversation(
                    conversationID: newest.conversationID, messageCount: group.count, newest: newest.createdAt)
            }.sorted { $0.conversationID < $1.conversationID }
        }
    }

    /// Stops a row loop once it has what it needs.
    private struct Enough: Error {}

    // MARK: Rows

    /// Opens a row's body; checks that it belongs to `conversationID` when one is given.
    private func open(_ row: SQLiteRow, tagIndex: Int, bodyIndex: Int, conversationID: String?) throws
        -> KecalekSealedBody.Contents
    {
        try Self.open(row, tagIndex: tagIndex, bodyIndex: bodyIndex, conversationID: conversationID, cipher: cipher)
    }

    fileprivate static func open(
        _ row: SQLiteRow, tagIndex: Int, bodyIndex: Int, conversationID: String?, cipher: ValueCipher
    ) throws -> KecalekSealedBody.Contents {
        let tag: [UInt8] = try row[tagIndex]
        let sealed: SealedValue = try row[bodyIndex]
        let contents = try KecalekSealedBody.decode(cipher.open(sealed, table: table, column: "body", rowID: tag))
        if let conversationID, contents.message.conversationID != conversationID {
            throw KecalekError(.cache, operation: "cache.read", detail: "a row is filed under another conversation")
        }
        return contents
    }

    private struct Writer: KecalekCacheWriter {
        let db: SQLiteConnection
        let cipher: ValueCipher
        let tags: KecalekCacheTags

        func upsert(_ message: KecalekMessage) throws -> Bool {
            let conversationTag = tags.conversation(message.conversationID)
            let messageTag = tags.message(conversationID: message.conversationID, messageID: message.messageID)
            let sealed = try cipher.seal(
                KecalekSealedBody.encode(message), table: KecalekSQLiteCache.table, column: "body", rowID: messageTag)
            // Insert when absent (the common case of a fetch), update in place otherwise.
            try db.execute(
                """
                INSERT OR IGNORE INTO kecalek_messages(conversation_tag, message_tag, created_us, body)
                VALUES (?, ?, ?, ?)
                """, [conversationTag, messageTag, message.createdAt.microseconds, sealed])
            if db.changes > 0 { return true }
            try db.execute(
                "UPDATE kecalek_messages SET created_us = ?, body = ? WHERE conversation_tag = ? AND message_tag = ?",
                [message.createdAt.microseconds, sealed, conversationTag, messageTag])
            return false
        }

        func delete(conversationID: String, messageIDs: [String]) throws -> [String] {
            let conversationTag = tags.conversation(conversationID)
            var removed: [String] = []
            for id in messageIDs {
                try db.execute(
                    "DELETE FROM kecalek_messages WHERE conversation_tag = ? AND message_tag = ?",
                    [conversationTag, tags.message(conversationID: conversationID, messageID: id)])
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
            let tag = tags.conversation(conversationID)
            let sealed = try cipher.seal(
                KecalekSealedSyncState.encode(state), table: "kecalek_sync_points", column: "body", rowID: tag)
            try db.execute(
                "INSERT OR REPLACE INTO kecalek_sync_points(conversation_tag, body) VALUES (?, ?)", [tag, sealed])
        }

        func addPendingReads(_ messageIDs: [String], conversationID: String) throws {
            let conversationTag = tags.conversation(conversationID)
            let next =
                try db.fetchOne(
                    Int64.self,
                    "SELECT coalesce(max(added), 0) + 1 FROM kecalek_pending_reads WHERE conversation_tag = ?",
                    [conversationTag]) ?? 1
            // One counter value per ID, so they come back in the order they were queued (the tags that key them
            // have no order of their own).
            for (offset, id) in messageIDs.enumerated() {
                let messageTag = tags.message(conversationID: conversationID, messageID: id)
                let sealed = try cipher.seal(
                    Array(id.utf8), table: "kecalek_pending_reads", column: "body", rowID: messageTag)
                try db.execute(
                    """
                    INSERT OR IGNORE INTO kecalek_pending_reads(conversation_tag, message_tag, added, body)
                    VALUES (?, ?, ?, ?)
                    """, [conversationTag, messageTag, next + Int64(offset), sealed])
            }
        }

        func removePendingReads(_ messageIDs: [String], conversationID: String) throws {
            let conversationTag = tags.conversation(conversationID)
            for id in messageIDs {
                try db.execute(
                    "DELETE FROM kecalek_pending_reads WHERE conversation_tag = ? AND message_tag = ?",
                    [conversationTag, tags.message(conversationID: conversationID, messageID: id)])
            }
        }

        func deleteDamagedRows(_ rows: [KecalekDamagedRow], conversationID: String) throws {
            let conversationTag = tags.conversation(conversationID)
            for row in rows {
                try db.execute(
                    "DELETE FROM kecalek_messages WHERE conversation_tag = ? AND message_tag = ?",
                    [conversationTag, row.storageKey])
            }
        }

        func message(conversationID: String, messageID: String) throws -> KecalekMessage? {
            try db.fetchOne(
                """
                SELECT message_tag, body FROM kecalek_messages WHERE conversation_tag = ? AND message_tag = ?
                """,
                [tags.conversation(conversationID), tags.message(conversationID: conversationID, messageID: messageID)]
            ) { row in
                let contents = try KecalekSQLiteCache.open(
                    row, tagIndex: 0, bodyIndex: 1, conversationID: conversationID, cipher: cipher)
                guard contents.message.messageID == messageID else {
                    throw KecalekError(.cache, operation: "cache.read", detail: "a row is filed under another message")
                }
                return contents.message
            }
        }
    }
}
