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

    /// A stored account.
    public init(key: String, server: URL, addedAt: Date) {
        self.key = key
        self.server = server
        self.addedAt = addedAt
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
        try db.fetchAll(
            "SELECT account, server, created_at FROM \(MastodonTimelineSchema.accounts) ORDER BY created_at, account"
        ) { row -> MastodonStoredAccount? in
            guard let server = URL(string: try row[1] as String) else { return nil }
            let millis: Int64 = try row[2]
            return MastodonStoredAccount(
                key: try row[0], server: server, addedAt: Date(timeIntervalSince1970: Double(millis) / 1000))
        }.compactMap { $0 }
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
