/// A `SQLiteMarkerStorage` keeps markers in a durable table of the app's store.
///
/// Add ``table`` to the schema's tables and ``createTable(_:)`` to a migration. Saving is a
/// conditional upsert evaluated by SQLite in ``ServerID`` order (byte length, then bytes), so a
/// marker never moves backwards even when two processes (the app and its notification extension)
/// share the file and one holds a stale value.
///
/// For example:
///
/// ```swift
/// let schema = DatabaseSchema(
///     tables: [SQLiteMarkerStorage.table],
///     migrations: [.init(version: 1, name: "markers") { try SQLiteMarkerStorage.createTable($0) }])
/// let storage = SQLiteMarkerStorage(database: try Database(path: path, schema: schema))
/// let marker = try MonotonicMarker(key: "home.read", storage: storage)
/// ```
public final class SQLiteMarkerStorage: MarkerStorage, Sendable {
    /// The table's name.
    public static let tableName = "tidings_markers"

    /// The table's declaration: durable, because a lost marker re-notifies the user of old things.
    public static let table = SQLiteSchema.Table.durable(tableName)

    /// Creates the table; call it from one of the schema's migrations.
    ///
    /// - Throws: ``StoreError`` from SQLite.
    public static func createTable(_ db: SQLiteConnection) throws {
        try db.execute(
            "CREATE TABLE IF NOT EXISTS \(tableName)(key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) STRICT")
    }

    private let database: SQLiteDatabase

    /// Uses `database`, whose schema must include ``table``.
    public init(database: SQLiteDatabase) { self.database = database }

    /// Reads the marker for `key`.
    ///
    /// - Throws: ``StoreError`` from SQLite.
    public func loadMarker(key: String) throws -> ServerID? {
        try database.read { db in
            try db.fetchOne(ServerID.self, "SELECT value FROM \(Self.tableName) WHERE key = ?", [key])
        }
    }

    /// Writes `value` for `key` in its own transaction unless a greater value is stored.
    ///
    /// - Throws: ``StoreError`` from SQLite (`busy`, `full`…).
    public func saveMarker(_ value: ServerID, key: String) throws {
        _ = try saveMarkerKeepingMaximum(value, key: key)
    }

    /// Writes `value` for `key` unless a greater value is stored, and reads back the stored value in the same
    /// transaction, so a greater value another process stored is seen.
    ///
    /// - Throws: ``StoreError`` from SQLite (`busy`, `full`…).
    public func saveMarkerKeepingMaximum(_ value: ServerID, key: String) throws -> ServerID {
        try database.write { db in try Self.upsert(db, value, key: key) }
    }

    /// ``saveMarkerKeepingMaximum(_:key:)`` on the store's own queue, for callers on Swift's cooperative pool.
    ///
    /// - Throws: as ``saveMarkerKeepingMaximum(_:key:)``; `CancellationError` when cancelled before it starts.
    public func saveMarkerKeepingMaximum(_ value: ServerID, key: String) async throws -> ServerID {
        try await database.write { db in try Self.upsert(db, value, key: key) }
    }

    /// ``loadMarker(key:)`` on the store's own queue, for callers on Swift's cooperative pool.
    ///
    /// - Throws: as ``loadMarker(key:)``; `CancellationError` when cancelled before it starts.
    public func loadMarker(key: String) async throws -> ServerID? {
        try await database.read { db in
            try db.fetchOne(ServerID.self, "SELECT value FROM \(Self.tableName) WHERE key = ?", [key])
        }
    }

    private static func upsert(_ db: SQLiteConnection, _ value: ServerID, key: String) throws -> ServerID {
        // BINARY comparison of TEXT is memcmp over UTF-8, and CAST AS BLOB measures bytes, which is
        // exactly ServerID's order: length first, then bytes.
        try db.execute(
            """
            INSERT INTO \(tableName)(key, value) VALUES (?, ?)
            ON CONFLICT(key) DO UPDATE SET value = excluded.value
            WHERE length(CAST(excluded.value AS BLOB)) > length(CAST(value AS BLOB))
               OR (length(CAST(excluded.value AS BLOB)) = length(CAST(value AS BLOB)) AND excluded.value > value)
            """, [key, value])
        return try db.fetchOne(ServerID.self, "SELECT value FROM \(tableName) WHERE key = ?", [key]) ?? value
    }
}
