/// A `SQLiteSchema` declares a store's tables and the migrations that build them.
///
/// Every table the migrations create must be declared, either **durable** (accounts, settings, drafts,
/// outbox: data only the device has, never dropped) or **disposable** (caches of server data: may be rebuilt
/// empty when the file has to be replaced). Migrations are numbered by SQLite's `user_version`: migration `n`
/// takes a file from version `n - 1` to `n`, and versions must run 1, 2, 3… with no gap.
///
/// For example:
///
/// ```swift
/// let schema = DatabaseSchema(
///     tables: [.durable("outbox"), .disposable("messages")],
///     migrations: [
///         .init(version: 1, name: "create") { db in
///             try db.executeScript("""
///                 CREATE TABLE outbox(id INTEGER PRIMARY KEY, payload BLOB NOT NULL);
///                 CREATE TABLE messages(id TEXT PRIMARY KEY, body BLOB);
///                 """)
///         }
///     ])
/// ```
public struct SQLiteSchema: Sendable {
    /// How a table's rows are treated when the file must be replaced (corruption, a too-new schema, a
    /// migration that cannot run on the existing data).
    public enum Durability: Sendable, Equatable {
        /// Data only this device has: copied into the replacement store whenever it is still readable.
        case durable
        /// A cache of data the server has: the replacement starts with it empty.
        case disposable
    }

    /// One declared table.
    public struct Table: Sendable, Equatable {
        /// The table's name, as the migrations spell it.
        public var name: String
        /// Whether its rows survive replacement of the file.
        public var durability: Durability

        /// Declares a table that holds data only this device has.
        public static func durable(_ name: String) -> Table { Table(name: name, durability: .durable) }
        /// Declares a table that caches server data and may be rebuilt empty.
        public static func disposable(_ name: String) -> Table { Table(name: name, durability: .disposable) }
    }

    /// One schema step, run inside the migration transaction.
    public struct Migration: Sendable {
        /// The `user_version` the file has after this step.
        public var version: Int
        /// A short name for reports and errors.
        public var name: String
        /// The step itself; throwing rolls back every step of this open.
        public var body: @Sendable (SQLiteConnection) throws -> Void

        /// Declares step `version` named `name`.
        public init(version: Int, name: String, body: @escaping @Sendable (SQLiteConnection) throws -> Void) {
            self.version = version
            self.name = name
            self.body = body
        }
    }

    /// The declared tables, parents before children (salvage copies them in this order).
    public var tables: [Table]
    /// The migration steps, in version order.
    public var migrations: [Migration]

    /// Declares a schema; `migrations` must be numbered 1, 2, 3… (checked when a store opens).
    public init(tables: [Table], migrations: [Migration]) {
        self.tables = tables
        self.migrations = migrations.sorted { $0.version < $1.version }
    }

    /// The newest version these migrations reach (0 with no migration).
    public var version: Int { migrations.last?.version ?? 0 }

    /// The durable tables, in declaration order.
    public var durableTables: [String] { tables.filter { $0.durability == .durable }.map(\.name) }

    /// Throws `misuse` unless versions run 1…n and table names are unique.
    func validate() throws {
        for (offset, migration) in migrations.enumerated() where migration.version != offset + 1 {
            throw StoreError.misuse(
                "migration '\(migration.name)' has version \(migration.version), expected \(offset + 1)")
        }
        var seen = Set<String>()
        for table in tables where !seen.insert(table.name.lowercased()).inserted {
            throw StoreError.misuse("table \(table.name) is declared twice")
        }
    }
}
