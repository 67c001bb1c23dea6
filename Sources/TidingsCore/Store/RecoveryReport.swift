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

    /// Why the file was replaced.
    public var reason: Reason
    /// The path the old database file was renamed to (`<name>.corrupt-<timestamp>`).
    public var movedTo: String
    /// When the replacement happened, from the configuration's clock.
    public var date: Date
    /// One entry per durable table of the schema, in declaration order.
    public var salvaged: [SalvagedTable]

    /// True when every durable table was copied completely.
    public var keptAllDurableData: Bool { salvaged.allSatisfy(\.isComplete) }
}
