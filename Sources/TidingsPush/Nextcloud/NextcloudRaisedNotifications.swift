import TidingsCore

/// `NextcloudRaisedNotifications` remembers, per account, which raised notification belongs to which
/// Nextcloud `nid`, so the silent `delete`, `delete-multiple` and `delete-all` pushes can take them down.
///
/// The map is a durable table of the app's store (a lost row leaves a stale notification on screen):
/// add ``table`` to the schema and ``createTable(_:)`` to a migration. Raised identifiers are opaque
/// strings the notification policy hands out. Work runs on the store's own queue.
public final class NextcloudRaisedNotifications: Sendable {
    /// The table's name.
    public static let tableName = "tidings_nextcloud_raised"

    /// The table's declaration: durable.
    public static let table = SQLiteSchema.Table.durable(tableName)

    /// Creates the table; call it from one of the schema's migrations.
    ///
    /// - Throws: `StoreError` from SQLite.
    public static func createTable(_ db: SQLiteConnection) throws {
        try db.execute(
            """
            CREATE TABLE IF NOT EXISTS \(tableName)(
              account TEXT NOT NULL, nid INTEGER NOT NULL, raised TEXT NOT NULL, PRIMARY KEY(account, nid)
            ) STRICT
            """)
    }

    private let database: SQLiteDatabase

    /// Uses `database`, whose schema must include ``table``.
    public init(database: SQLiteDatabase) { self.database = database }

    /// Records that notification `nid` of `account` was raised as `raisedIdentifier` (replacing an older one).
    ///
    /// - Throws: `StoreError` from SQLite; `CancellationError` when cancelled before it starts.
    public func record(account: String, nid: Int64, raisedIdentifier: String) async throws {
        try await database.write { db in
            try db.execute(
                "INSERT OR REPLACE INTO \(Self.tableName)(account, nid, raised) VALUES (?, ?, ?)",
                [account, nid, raisedIdentifier])
        }
    }

    /// Turns an opened push into what the glue does; for a withdrawal, removes the rows it names in the
    /// same transaction that reads them, so a withdrawal is handed out once.
    ///
    /// - Throws: `StoreError` from SQLite; `CancellationError` when cancelled before it starts.
    public func outcome(of subject: NextcloudProxySubject, account: String) async throws -> NextcloudPushOutcome {
        let table = Self.tableName
        switch subject {
        case .notification(let nid, let app, let text, let type, let id):
            return app == "social"
                ? .pollNotifications(nid: nid) : .raise(nid: nid, app: app, subject: text, type: type, id: id)
        case .delete(let nid):
            return try await withdraw(nids: [nid], account: account)
        case .deleteMultiple(let nids):
            return try await withdraw(nids: nids, account: account)
        case .deleteAll:
            let raised = try await database.write { db in
                let raised = try db.fetchAll(
                    String.self, "SELECT raised FROM \(table) WHERE account = ? ORDER BY nid", [account])
                try db.execute("DELETE FROM \(table) WHERE account = ?", [account])
                return raised
            }
            return .withdraw(raisedIdentifiers: Self.once(raised))
        }
    }

    /// Every raised identifier mapped for `account` (what its sign-out withdraws), by `nid`.
    ///
    /// - Throws: `StoreError` from SQLite.
    public func raisedIdentifiers(account: String) async throws -> [String] {
        let table = Self.tableName
        return try await database.read { db in
            try db.fetchAll(String.self, "SELECT raised FROM \(table) WHERE account = ? ORDER BY nid", [account])
        }
    }

    /// Deletes the account's map (sign-out): a later `delete` for one of its `nid`s withdraws nothing.
    ///
    /// - Throws: `StoreError` from SQLite.
    public func forget(account: String) async throws {
        let table = Self.tableName
        try await database.write { db in try db.execute("DELETE FROM \(table) WHERE account = ?", [account]) }
    }

    private func withdraw(nids: [Int64], account: String) async throws -> NextcloudPushOutcome {
        let table = Self.tableName
        let raised = try await database.write { db in
            var raised: [String] = []
            for nid in nids {
                let arguments: SQLiteArguments = [account, nid]
                if let identifier = try db.fetchOne(
                    String.self, "SELECT raised FROM \(table) WHERE account = ? AND nid = ?", arguments)
                {
                    raised.append(identifier)
                    try db.execute("DELETE FROM \(table) WHERE account = ? AND nid = ?", arguments)
                }
            }
            // A notification another nid still announces stays up: only that nid's delete may take it down.
            var withdrawn: [String] = []
            for identifier in Self.once(raised) {
                let shared = try db.fetchOne(
                    Int64.self, "SELECT count(*) FROM \(table) WHERE account = ? AND raised = ?", [account, identifier])
                if shared ?? 0 == 0 { withdrawn.append(identifier) }
            }
            return withdrawn
        }
        return .withdraw(raisedIdentifiers: raised)
    }

    /// Matches the Social push `nid` to one of `candidates` — the raised notifications its poll found that a push
    /// may announce, oldest first — and records it, in one transaction: the nids of the account already matched to
    /// any of the candidates and `nid` are matched again in ascending order to the candidates in order (Nextcloud's
    /// nids grow as notifications are made), so several pushes covered by one poll each get their own notification
    /// whatever order they are handled in; nids beyond the candidates share the newest.
    ///
    /// - Returns: The raised identifier `nid` now maps to; nil when there is no candidate (nothing recorded).
    /// - Throws: `StoreError` from SQLite; `CancellationError` when cancelled before it starts.
    public func claim(account: String, nid: Int64, candidates: [String]) async throws -> String? {
        let candidates = Self.once(candidates)
        guard let newest = candidates.last else { return nil }
        let table = Self.tableName
        return try await database.write { db in
            let wanted = Set(candidates)
            let rows = try db.fetchAll("SELECT nid, raised FROM \(table) WHERE account = ?", [account]) { row in
                (try Int64(databaseColumn: row.column(0)), try String(databaseColumn: row.column(1)))
            }
            let matched = Set(rows.filter { wanted.contains($0.1) }.map(\.0)).union([nid]).sorted()
            var mine: String?
            for (index, matchedNID) in matched.enumerated() {
                let identifier = index < candidates.count ? candidates[index] : newest
                if matchedNID == nid { mine = identifier }
                try db.execute(
                    "INSERT OR REPLACE INTO \(table)(account, nid, raised) VALUES (?, ?, ?)",
                    [account, matchedNID, identifier])
            }
            return mine
        }
    }

    /// `identifiers` with each one once, in their first order.
    private static func once(_ identifiers: [String]) -> [String] {
        var seen: Set<String> = []
        return identifiers.filter { seen.insert($0).inserted }
    }
}
