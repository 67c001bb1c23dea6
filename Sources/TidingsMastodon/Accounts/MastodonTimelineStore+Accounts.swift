import Foundation
import TidingsCore

/// A signed-in account as the store keeps it (`mastodon_accounts`, a durable table): enough for a relaunch to
/// know which accounts to sign in again, never a token (the app keeps tokens in its keychain, by ``key``).
public struct MastodonStoredAccount: Sendable, Hashable {
    /// The account's key (``MastodonAPIClient/accountKey``, e.g. `alice@mastodon.social`).
    public var key: String
    /// The server's base URL, without credentials, query or fragment.
    public var server: URL
    /// When the account was first signed in on this device.
    public var addedAt: Date
    /// The account's own ID on its server (`verify_credentials`), once learned: what tells a reply to the reader
    /// from a mention.
    public var readerID: ServerID?

    /// A stored account.
    public init(key: String, server: URL, addedAt: Date, readerID: ServerID? = nil) {
        self.key = key
        self.server = server
        self.addedAt = addedAt
        self.readerID = readerID
    }
}

/// The signed-in accounts. Durable: recovery copies them into a replacement file and migrations never drop
/// them, unlike the caches beside them.
extension MastodonTimelineStore {
    /// Records `key` as signed in on `server` (kept as it was when already recorded, except for the server).
    public func saveAccount(key: String, server: URL, in db: SQLiteConnection) throws {
        try db.execute(
            """
            INSERT INTO \(MastodonTimelineSchema.accounts)(account, server, created_at) VALUES (?, ?, ?)
            ON CONFLICT(account) DO UPDATE SET server = excluded.server
            """, [key, Self.storable(server), nowMillis])
    }

    /// Forgets `key` (signed out); its unsent actions stay in the outbox until it signs in again.
    public func removeAccount(key: String, in db: SQLiteConnection) throws {
        try db.execute("DELETE FROM \(MastodonTimelineSchema.accounts) WHERE account = ?", [key])
    }

    /// The signed-in accounts, oldest first. A row whose server this version cannot read is skipped.
    public func storedAccounts(in db: SQLiteConnection) throws -> [MastodonStoredAccount] {
        let readerColumn = try Self.hasReaderColumn(db) ? "reader_id" : "NULL"
        return try db.fetchAll(
            """
            SELECT account, server, created_at, \(readerColumn) FROM \(MastodonTimelineSchema.accounts)
            ORDER BY created_at, account
            """
        ) { row -> MastodonStoredAccount? in
            guard let server = URL(string: try row[1] as String) else { return nil }
            let millis: Int64 = try row[2]
            let reader: String? = try row[3]
            return MastodonStoredAccount(
                key: try row[0], server: server, addedAt: Date(timeIntervalSince1970: Double(millis) / 1000),
                readerID: reader.map { ServerID($0) })
        }.compactMap { $0 }
    }

    /// Keeps the account's own ID beside its record (a no-op for an account that is not recorded).
    ///
    /// The column is added to an older table here rather than by a migration: stores compose this schema's
    /// migrations with their own numbered after them, which a new migration here would renumber.
    public func saveReaderID(_ id: ServerID, key: String, in db: SQLiteConnection) throws {
        if try !Self.hasReaderColumn(db) {
            try db.execute("ALTER TABLE \(MastodonTimelineSchema.accounts) ADD COLUMN reader_id TEXT")
        }
        try db.execute(
            "UPDATE \(MastodonTimelineSchema.accounts) SET reader_id = ? WHERE account = ?", [id.rawValue, key])
    }

    /// The account's own ID as kept by ``saveReaderID(_:key:in:)``; nil before it was learned.
    public func readerID(key: String, in db: SQLiteConnection) throws -> ServerID? {
        guard try Self.hasReaderColumn(db) else { return nil }
        let id = try db.fetchOne(
            String?.self, "SELECT reader_id FROM \(MastodonTimelineSchema.accounts) WHERE account = ?", [key])
        return id.flatMap { $0 }.map { ServerID($0) }
    }

    private static func hasReaderColumn(_ db: SQLiteConnection) throws -> Bool {
        try db.fetchAll("PRAGMA table_info(\(MastodonTimelineSchema.accounts))") { row in try row[1] as String }
            .contains("reader_id")
    }

    /// The signed-in accounts, oldest first, read on the store's queue.
    public func storedAccounts() async throws -> [MastodonStoredAccount] {
        try await database.read { db in try self.storedAccounts(in: db) }
    }

    /// `server` without user, password, query or fragment: nothing secret is written beside the accounts.
    static func storable(_ server: URL) -> String {
        guard var components = URLComponents(url: server, resolvingAgainstBaseURL: false) else { return "" }
        components.user = nil
        components.password = nil
        components.query = nil
        components.fragment = nil
        return components.string ?? ""
    }
}
