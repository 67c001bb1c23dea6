import Foundation
import TidingsCore

/// A `MastodonTimelineStore` caches timelines as positioned entries with gaps, over one `SQLiteDatabase`.
///
/// Guarantees:
/// - A status appears at most once per timeline; positions rise with the statuses' `ServerID` order.
/// - Wherever the store cannot prove two cached statuses adjacent on the server, a gap entry lies between
///   them: it never shows a hole as a continuous timeline.
/// - A deleted status stays deleted: pages that still carry it (fetched before the deletion) do not bring it
///   back.
/// - Payloads are sealed at rest with the database's `ValueCipher` when it has one, bound to their row.
/// - Every method that takes a `SQLiteConnection` expects to run inside one of this database's write
///   transactions, so a page is applied whole or not at all; the `async` methods open that transaction on
///   the store's queue.
public final class MastodonTimelineStore: Sendable {
    /// The database the store lives in (opened with ``MastodonTimelineSchema/schema``).
    public let database: SQLiteDatabase
    let now: @Sendable () -> Date

    /// A store over `database`, which must have been opened with ``MastodonTimelineSchema/schema``.
    ///
    /// - Parameters:
    ///   - database: The database, opened with ``MastodonTimelineSchema/schema``.
    ///   - now: The clock for `fetched_at` and tombstones (a fixed date in tests).
    public init(database: SQLiteDatabase, now: @escaping @Sendable () -> Date = { Date() }) {
        self.database = database
        self.now = now
    }

    var nowMillis: Int64 { Int64((now().timeIntervalSince1970 * 1000).rounded(.down)) }

    // MARK: Reading

    /// The entries of `key`, oldest first.
    public func entries(_ key: MastodonTimelineKey, in db: SQLiteConnection) throws -> [MastodonTimelineEntry] {
        try db.fetchAll(
            "SELECT position, status_id, gap_state FROM \(MastodonTimelineSchema.entries) "
                + "WHERE account = ? AND timeline = ? ORDER BY position",
            [key.account, key.timeline]
        ) { row in
            let position: Int64 = try row[0]
            if let id: String = try row[1] {
                return MastodonTimelineEntry(position: position, content: .status(ServerID(id)))
            }
            let raw: Int64 = try row[2]
            guard let state = MastodonGapState(rawValue: raw) else {
                throw MastodonTimelineError(.corruptRow, detail: "gap state \(raw) in \(key)")
            }
            return MastodonTimelineEntry(position: position, content: .gap(state))
        }
    }

    /// The entries of `key`, oldest first, read on the store's queue.
    public func entries(_ key: MastodonTimelineKey) async throws -> [MastodonTimelineEntry] {
        try await database.read { db in try self.entries(key, in: db) }
    }

    /// The cached status `id` of `account`, opened, or `nil` when it is not cached.
    public func status(account: String, id: ServerID, in db: SQLiteConnection) throws -> MastodonStoredStatus? {
        let row: (SealedValue, Bool)? = try db.fetchOne(
            "SELECT payload, edited FROM \(MastodonTimelineSchema.statuses) WHERE account = ? AND status_id = ?",
            [account, id.rawValue]
        ) { row in (try row[0], try row[1]) }
        guard let (sealed, edited) = row else { return nil }
        return MastodonStoredStatus(id: id, payload: try openPayload(sealed, account: account, id: id), edited: edited)
    }

    /// The cached status `id` of `account`, read on the store's queue.
    public func status(account: String, id: ServerID) async throws -> MastodonStoredStatus? {
        try await database.read { db in try self.status(account: account, id: id, in: db) }
    }

    /// Plans the fetch for `request` on `key` from what is cached now.
    ///
    /// - Throws: as ``MastodonTimelinePlanner/plan(_:entries:limit:serverCap:)``.
    public func plan(
        _ request: MastodonTimelineRequest, for key: MastodonTimelineKey, limit: Int, serverCap: Int? = nil
    ) async throws -> MastodonTimelineFetchPlan {
        try await database.read { db in
            try self.plan(request, for: key, limit: limit, serverCap: serverCap, in: db)
        }
    }

    /// Plans the fetch for `request` on `key` inside the caller's transaction; a refresh starts from the
    /// stored refresh cursor when that is newer than the newest cached status (see ``newerCursor(_:in:)``).
    ///
    /// - Throws: as ``MastodonTimelinePlanner/plan(_:entries:limit:serverCap:)``.
    public func plan(
        _ request: MastodonTimelineRequest, for key: MastodonTimelineKey, limit: Int, serverCap: Int? = nil,
        in db: SQLiteConnection
    ) throws -> MastodonTimelineFetchPlan {
        let entries = try entries(key, in: db)
        var request = request
        if case .loadGap(let position, _) = request, MastodonTimelinePlanner.isTopGap(position, in: entries) {
            request = .refresh
        }
        let plan = try MastodonTimelinePlanner.plan(request, entries: entries, limit: limit, serverCap: serverCap)
        return try applyingCursors(plan, request: request, key: key, in: db)
    }

    // MARK: Payloads

    static func rowKey(account: String, id: String) -> String { "\(account)\n\(id)" }

    func sealPayload(_ payload: Data, account: String, id: ServerID) throws -> SealedValue {
        guard let cipher = database.cipher else { return SealedValue(bytes: [UInt8](payload)) }
        return try cipher.seal(
            [UInt8](payload), table: MastodonTimelineSchema.statuses, column: "payload",
            rowID: Self.rowKey(account: account, id: id.rawValue))
    }

    func openPayload(_ sealed: SealedValue, account: String, id: ServerID) throws -> Data {
        guard let cipher = database.cipher else { return Data(sealed.bytes) }
        return Data(
            try cipher.open(
                sealed, table: MastodonTimelineSchema.statuses, column: "payload",
                rowID: Self.rowKey(account: account, id: id.rawValue)))
    }

    /// Writes or replaces the status row (not its entries); keeps the `edited` flag.
    func upsertStatus(_ item: MastodonTimelinePage.Item, account: String, in db: SQLiteConnection) throws {
        try db.execute(
            "INSERT INTO \(MastodonTimelineSchema.statuses)(account, status_id, payload, fetched_at) VALUES (?, ?, ?, ?) "
                + "ON CONFLICT(account, status_id) DO UPDATE SET payload = excluded.payload, fetched_at = excluded.fetched_at",
            [account, item.id.rawValue, try sealPayload(item.payload, account: account, id: item.id), nowMillis])
    }

    func isTombstoned(account: String, id: ServerID, in db: SQLiteConnection) throws -> Bool {
        try db.fetchOne(
            Int64.self, "SELECT 1 FROM \(MastodonTimelineSchema.tombstones) WHERE account = ? AND status_id = ?",
            [account, id.rawValue]) != nil
    }
}
