import Foundation

/// A `RecoveryReport` says why a store file was replaced, where the old one went, and what was kept.
///
/// The old file (with its `-wal` and `-shm`) is renamed, never deleted, so data that could not be copied can
/// still be rescued by hand from ``movedTo``.
public struct RecoveryReport: Sendable, Equatable {
    /// Why the file was replaced.
    public enum Reason: Sendable, Equatable {
        /// The file is not an SQLite database (random bytes, truncated header); SQLite's message.
        case notADatabase(String)
        /// SQLite reported corruption or `PRAGMA quick_check` failed; its first complaint.
        case corrupt(String)
        /// The file's schema version is newer than the code's.
        case schemaTooNew(found: Int, known: Int)
        /// A migration step failed on this file's data (it succeeds on an empty store).
        case migrationFailed(version: Int, message: String)
    }

    /// What happened to one durable table.
    public struct SalvagedTable: Sendable, Equatable {
        /// The table's name.
        public var table: String
        /// Rows copied into the fresh store.
        public var rowsCopied: Int
        /// Rows read from the old file that are not in the fresh store: refused by the new schema's constraints,
        /// or repeating a key already copied (only a damaged file does that).
        public var rowsRefused: Int
        /// Why copying stopped early or could not start (unreadable table, missing in the old file), if it did.
        public var problem: String?

        /// True when every row was read and copied.
        public var isComplete: Bool { problem == nil && rowsRefused == 0 }
    }

    /// A row of the fresh store whose reference points to no row, found by `PRAGMA foreign_key_check` after
    /// salvage (typically a parent row lost to the damage). Such rows are kept, and listed here.
    public struct ForeignKeyViolation: Sendable, Equatable {
        /// The table of the row holding the reference.
        public var table: String
        /// That row's rowid (`nil` for a `WITHOUT ROWID` table).
        public var rowID: Int64?
        /// The table the reference points to.
        public var parent: String
        /// Which of the table's foreign keys it is (SQLite's `fkid`); -1 when the check itself failed.
        public var constraintIndex: Int
    }

    /// Why the file was replaced.
    public var reason: Reason
    /// The path the old database file was renamed to (`<name>.corrupt-<timestamp>`).
    public var movedTo: String
    /// When the replacement happened, from the configuration's clock.
    public var date: Date
    /// One entry per durable table of the schema, in declaration order.
    public var salvaged: [SalvagedTable]

    /// What `PRAGMA foreign_key_check` found in the fresh store after salvage; empty when every reference
    /// holds.
    public var foreignKeyViolations: [ForeignKeyViolation] = []

    /// True when every durable table was copied completely.
    public var keptAllDurableData: Bool { salvaged.allSatisfy(\.isComplete) }

    /// The durable tables whose data was not all kept: not found or unreadable in the old file, stopped by
    /// damage, or with rows refused. Their rows may still be rescued by hand from ``movedTo``.
    public var tablesNotKept: [String] { salvaged.filter { !$0.isComplete }.map(\.table) }
}
