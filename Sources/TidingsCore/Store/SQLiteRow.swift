import CSQLite

/// A `SQLiteRow` is the current result row of a statement being stepped, read in place.
///
/// Reading a column copies only what the requested type keeps (an `Int` copies nothing else), so iterating
/// a large result allocates nothing per row.
///
/// - Warning: A row is valid only inside the closure it was passed to; it reads the statement directly, so
///   keeping it and reading it later gives the values of some later row, or throws. Copy what you need.
public struct SQLiteRow {
    @usableFromInline let statement: OpaquePointer
    /// The number of columns of the result.
    public let count: Int

    @usableFromInline init(statement: OpaquePointer, count: Int) {
        self.statement = statement
        self.count = count
    }

    /// Reads column `index` (from 0) as `T`.
    ///
    /// - Throws: ``StoreError/misuse`` when `index` is out of range, ``StoreError/typeMismatch`` when the
    ///   column's value cannot be read as `T` (e.g. `NULL` into a non-optional).
    @inlinable
    public subscript<T: SQLiteValueConvertible>(_ index: Int) -> T {
        get throws { try T(databaseColumn: column(index)) }
    }

    /// Reads the column named `name` as `T`; a linear search over the column names, so prefer indexes in
    /// hot loops.
    ///
    /// - Throws: ``StoreError/misuse`` when no column has that name, ``StoreError/typeMismatch`` as above.
    public subscript<T: SQLiteValueConvertible>(_ name: String) -> T {
        get throws {
            for index in 0..<count where columnName(index) == name {
                return try T(databaseColumn: SQLiteColumn(statement: statement, index: Int32(index)))
            }
            throw StoreError.misuse("no column named \(name)")
        }
    }

    /// The column at `index` (from 0), for reading its storage class or raw value.
    ///
    /// - Throws: ``StoreError/misuse`` when `index` is out of range.
    @inlinable
    public func column(_ index: Int) throws -> SQLiteColumn {
        guard index >= 0, index < count else { throw StoreError.misuse("column \(index) out of 0..<\(count)") }
        return SQLiteColumn(statement: statement, index: Int32(truncatingIfNeeded: index))
    }

    /// The name of column `index` as the query spelled it (`AS` alias or column name).
    public func columnName(_ index: Int) -> String? {
        guard index >= 0, index < count, let name = sqlite3_column_name(statement, Int32(index)) else { return nil }
        return String(cString: name)
    }

    /// All columns as ``SQLiteValue``s, for logging or generic code (allocates; avoid in hot loops).
    public var values: [SQLiteValue] {
        (0..<count).map { SQLiteColumn(statement: statement, index: Int32($0)).value }
    }
}

/// A `SQLiteColumn` is one column of the current row, read in place by ``SQLiteValueConvertible``.
///
/// - Warning: Valid only while the row it came from is; see ``SQLiteRow``.
public struct SQLiteColumn {
    /// The SQLite storage class of a value.
    public enum Storage: Sendable, Equatable {
        /// SQLite's five storage classes: `NULL`, `INTEGER`, `REAL`, `TEXT` and `BLOB`.
        case null, integer, real, text, blob
    }

    @usableFromInline let statement: OpaquePointer
    @usableFromInline let index: Int32

    @usableFromInline init(statement: OpaquePointer, index: Int32) {
        self.statement = statement
        self.index = index
    }

    /// The storage class of the value in this row.
    @inlinable
    public var storage: Storage {
        switch sqlite3_column_type(statement, index) {
        case SQLITE_INTEGER: .integer
        case SQLITE_FLOAT: .real
        case SQLITE_TEXT: .text
        case SQLITE_BLOB: .blob
        default: .null
        }
    }

    /// The value when its storage class is `INTEGER`, else `nil`: one check and one read, for hot loops.
    @inlinable
    public var integer: Int64? {
        // One column lookup, then two cheap reads of the value, instead of two column lookups.
        guard let value = sqlite3_column_value(statement, index), sqlite3_value_type(value) == SQLITE_INTEGER else {
            return nil
        }
        return sqlite3_value_int64(value)
    }

    /// The value as a 64-bit integer (SQLite's conversion rules apply to other storage classes).
    @inlinable
    public var int64: Int64 { sqlite3_column_int64(statement, index) }

    /// The value as a double (SQLite's conversion rules apply to other storage classes).
    @inlinable
    public var double: Double { sqlite3_column_double(statement, index) }

    /// The value as UTF-8 text (invalid UTF-8 is repaired with replacement characters, never trapped on).
    public var string: String {
        guard let text = sqlite3_column_text(statement, index) else { return "" }
        let length = Int(sqlite3_column_bytes(statement, index))
        return String(decoding: UnsafeBufferPointer(start: text, count: length), as: UTF8.self)
    }

    /// The value's bytes, copied.
    public var bytes: [UInt8] {
        // sqlite3_column_blob must come before sqlite3_column_bytes: the documented safe order.
        guard let blob = sqlite3_column_blob(statement, index) else { return [] }
        let length = Int(sqlite3_column_bytes(statement, index))
        return [UInt8](UnsafeRawBufferPointer(start: blob, count: length))
    }

    /// The value in its own storage class.
    public var value: SQLiteValue {
        switch storage {
        case .null: .null
        case .integer: .integer(int64)
        case .real: .real(double)
        case .text: .text(string)
        case .blob: .blob(bytes)
        }
    }

    /// A ``StoreError/typeMismatch`` naming the column and what was found.
    public func mismatch(_ expected: String) -> StoreError {
        let name = sqlite3_column_name(statement, index).map { String(cString: $0) } ?? "\(index)"
        return StoreError.typeMismatch("column \(name) holds \(storage), not \(expected)")
    }
}
