extension ServerID: SQLiteValueConvertible {
    /// Stored as TEXT, the exact spelling the server sent.
    public var databaseValue: SQLiteValue { .text(rawValue) }

    /// Reads TEXT, or an INTEGER written by older code, as its decimal spelling.
    ///
    /// - Throws: ``StoreError`` `typeMismatch` for REAL, BLOB or NULL (use `ServerID?` for NULLs).
    public init(databaseColumn column: SQLiteColumn) throws {
        switch column.storage {
        case .text: self.init(column.string)
        case .integer: self.init(String(column.int64))
        default: throw column.mismatch("ServerID")
        }
    }
}
