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
/// - Given a key, the store seals titles, drafts, wrapped chat keys, message bodies, embeds, embed keys and
///   the other server bodies with TidingsCore's `ValueCipher` (AES-256-GCM bound to table, column and row):
///   none of them is in clear in the file. IDs, versions, timestamps, roles and flags stay in clear (the sync
///   and the list order need them). A wrong key fails at open with `StoreError.wrongKey`; an encrypted store
///   opened without a key fails with ``OpenMatesError/store``; values written in clear before a key was given
///   are sealed in place when it is. The file and its companions have mode 0600 either way.
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
    /// How many values written in clear (before the store had a key) were sealed when it was opened with one.
    public let sealedInPlace: Int
    /// How many chats the store keeps.
    public let maximumChats: Int
    /// Whether the store seals its sensitive columns (it was opened with a key).
    public var isEncrypted: Bool { sealing.cipher != nil }
    let sealing: OpenMatesStoreSealing

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
    ///   - key: A 256-bit key to encrypt the store at rest with (keep it where the app keeps secrets); nil
    ///     stores in clear.
    /// - Throws: `StoreError` when the file cannot be opened at all (missing directory, busy),
    ///   `StoreError.wrongKey` when `key` is not the store's, `StoreError.misuse` for a key that is not
    ///   256-bit, ``OpenMatesError/store`` when the store is encrypted and no key was given.
    public init(
        path: String, maximumChats: Int = 100, logger: TidingsLogger = .disabled,
        key: TidingsCrypto.SymmetricKey? = nil
    ) throws {
        let cipher = try key.map { try ValueCipher(key: $0) }
        database = try SQLiteDatabase(
            path: path, schema: OpenMatesStoreSchema.schema, configuration: .init(logger: logger, cipher: cipher))
        sealing = OpenMatesStoreSealing(cipher: cipher)
        self.maximumChats = max(1, maximumChats)
        if cipher == nil, try Self.hasKeyCheck(database) {
            database.close()
            throw OpenMatesError(
                .store, operation: "store.open", detail: "the store is encrypted: open it with its key")
        }
        if cipher != nil {
            // Deleted and rewritten values leave no plaintext (or old ciphertext) in free pages of the file.
            try database.writeWithoutTransaction { db in try db.execute("PRAGMA secure_delete = ON") }
        }
        let sealing = self.sealing
        (healedTables, sealedInPlace) = try database.write { db in
            var healed: [String] = []
            for table in OpenMatesStoreSchema.tables {
                if try !db.tableExists(table.name) { healed.append(table.name) }
                try db.executeScript(table.sql)
            }
            let sealed = try sealing.sealValuesInClear(db)
            _ = try Self.linkCodeRunOutputs(db, sealing)
            return (healed, sealed)
        }
        if sealedInPlace > 0 { logger.notice("openmates store sealed \(self.sealedInPlace) values stored in clear") }
        if !healedTables.isEmpty {
            logger.notice("openmates store healed missing tables: \(self.healedTables.joined(separator: ", "))")
        }
    }

    /// Opens the store like ``init(path:maximumChats:logger:key:)`` on a queue of its own: callers on Swift's
    /// cooperative pool use this.
    public static func open(
        path: String, maximumChats: Int = 100, logger: TidingsLogger = .disabled,
        key: TidingsCrypto.SymmetricKey? = nil
    ) async throws -> OpenMatesStore {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue(label: "tidings.openmates.open").async {
                continuation.resume(
                    with: Result {
                        try OpenMatesStore(path: path, maximumChats: maximumChats, logger: logger, key: key)
                    })
            }
        }
    }

    /// A private in-memory store, encrypted when `key` is given.
    public static func inMemory(maximumChats: Int = 100, key: TidingsCrypto.SymmetricKey? = nil) throws
        -> OpenMatesStore
    {
        try OpenMatesStore(path: ":memory:", maximumChats: maximumChats, key: key)
    }

    /// Whether the file has TidingsCore's key check, i.e. was written with a key.
    private static func hasKeyCheck(_ database: SQLiteDatabase) throws -> Bool {
        try database.read { db in
            guard try db.tableExists("tidings_meta") else { return false }
            return try db.fetchOne(Int.self, "SELECT count(*) FROM tidings_meta WHERE name = 'key_check'") ?? 0 > 0
        }
    }

    /// The lower-case hex SHA-256 of a chat ID: how embeds and embed keys name their chat.
    public static func hashedChatID(_ chatID: String) -> String {
        TidingsCrypto.SHA256.hash(Array(chatID.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// Starts over on purpose: removes every chat, message, embed, key, suggestion and tombstone, keeping the
    /// pending actions (they are the user's, and replay once the server data is back) and the failed ones not
    /// dismissed yet (their reasons are the user's too).
    public func resetLocalStore() throws {
        let kept: Set<String> = ["om_pending_actions", Self.failedActionsTable]
        try database.write { db in
            for table in OpenMatesStoreSchema.tables where !kept.contains(table.name) {
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
