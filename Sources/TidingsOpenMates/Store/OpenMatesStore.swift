import Foundation
import TidingsCore

/// The OpenMates offline store in SQLite: chats (metadata, versions, drafts), messages, embeds, embed keys,
/// code-run outputs, suggestions, daily inspirations, tombstones and the durable pending-actions queue.
///
/// Guarantees:
/// - Server data (chats, messages, embeds, keys, suggestions) is in disposable tables; tombstones and pending
///   actions are durable. An unreadable file is moved aside and rebuilt empty with every durable row that
///   is still readable (`SQLiteDatabase` recovery; see ``openReport``): the server refills the rest.
/// - A partial schema (tables missing from a file whose version is current) is healed in place on open,
///   keeping the data of the tables that are there (``healedTables``), before any sync starts.
/// - ``apply(_:)`` writes a list of changes in one transaction, then keeps only the last
///   ``maximumChats`` chats (pinned first, then last edited); a chat a pending action concerns is never evicted.
/// - Content stays as the server sent it (encrypted by the client that wrote it); the store adds no
///   encryption of its own in this increment.
///
/// For example:
/// ```swift
/// let store = try await OpenMatesStore.open(path: url.path)
/// let start = try store.coldStart()   // chat list + first 5 chats' messages, before the network
/// ```
public final class OpenMatesStore: Sendable {
    /// The store underneath.
    public let database: SQLiteDatabase
    /// Tables that were missing and were created on open.
    public let healedTables: [String]
    /// How many chats the store keeps.
    public let maximumChats: Int

    /// The store's queue: an engine on it reads and writes SQLite off the cooperative pool.
    public var executor: SQLiteExecutor { database.executor }
    /// What opening found: creation, migration, recovery of a damaged file.
    public var openReport: SQLiteDatabase.OpenReport { database.openReport }

    /// Opens (creating if needed) the store at `path`, heals missing tables and recovers a damaged file.
    ///
    /// - Parameters:
    ///   - path: A file path, or `":memory:"`.
    ///   - maximumChats: How many chats to keep (the document: 100).
    ///   - logger: Receives the store's notices; never content.
    /// - Throws: `StoreError` when the file cannot be opened at all (missing directory, busy).
    public init(path: String, maximumChats: Int = 100, logger: TidingsLogger = .disabled) throws {
        database = try SQLiteDatabase(
            path: path, schema: OpenMatesStoreSchema.schema, configuration: .init(logger: logger))
        self.maximumChats = max(1, maximumChats)
        healedTables = try database.write { db in
            var healed: [String] = []
            for table in OpenMatesStoreSchema.tables {
                if try !db.tableExists(table.name) { healed.append(table.name) }
                try db.executeScript(table.sql)
            }
            return healed
        }
        if !healedTables.isEmpty {
            logger.notice("openmates store healed missing tables: \(self.healedTables.joined(separator: ", "))")
        }
    }

    /// Opens the store like ``init(path:maximumChats:logger:)`` on a queue of its own: callers on Swift's
    /// cooperative pool use this.
    public static func open(path: String, maximumChats: Int = 100, logger: TidingsLogger = .disabled) async throws
        -> OpenMatesStore
    {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue(label: "tidings.openmates.open").async {
                continuation.resume(
                    with: Result { try OpenMatesStore(path: path, maximumChats: maximumChats, logger: logger) })
            }
        }
    }

    /// A private in-memory store.
    public static func inMemory(maximumChats: Int = 100) throws -> OpenMatesStore {
        try OpenMatesStore(path: ":memory:", maximumChats: maximumChats)
    }

    /// The lower-case hex SHA-256 of a chat ID: how embeds and embed keys name their chat.
    public static func hashedChatID(_ chatID: String) -> String {
        TidingsCrypto.SHA256.hash(Array(chatID.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// Starts over on purpose: removes every chat, message, embed, key, suggestion and tombstone, keeping the
    /// pending actions (they are the user's, and replay once the server data is back).
    public func resetLocalStore() throws {
        try database.write { db in
            for table in OpenMatesStoreSchema.tables where table.name != "om_pending_actions" {
                try db.execute("DELETE FROM \(table.name)")
            }
        }
    }

    /// Logout: erases everything, the pending actions and every key included, and zeroes the freed pages.
    public func eraseAll() throws {
        try database.writeWithoutTransaction { db in try db.execute("PRAGMA secure_delete = ON") }
        try database.write { db in
            for table in OpenMatesStoreSchema.tables { try db.execute("DELETE FROM \(table.name)") }
        }
    }
}
