import CSQLite
import Foundation

/// A `SQLiteValue` is one SQLite value: `NULL`, a 64-bit integer, a double, text or a blob.
public enum SQLiteValue: Sendable, Hashable {
    /// SQL `NULL`.
    case null
    /// An `INTEGER` storage class value.
    case integer(Int64)
    /// A `REAL` storage class value.
    case real(Double)
    /// A `TEXT` storage class value (UTF-8 in the file).
    case text(String)
    /// A `BLOB` storage class value.
    case blob([UInt8])
}

/// A type that can be bound to a statement parameter and read back from a result column.
///
/// Tidings provides conformances for `Int`, `Int64`, `Int32`, `Double`, `Bool`, `String`, `[UInt8]`, `Data`,
/// `SQLiteValue`, ``SealedValue`` and `Optional` of any of them. Reading never traps: a `NULL` or a value of
/// an unexpected storage class throws ``StoreError/typeMismatch`` (`Optional` reads `NULL` as `nil`).
///
/// For example, a `Date` stored as unix milliseconds:
///
/// ```swift
/// extension Date: DatabaseValueConvertible {
///     public var databaseValue: DatabaseValue { .integer(Int64(timeIntervalSince1970 * 1000)) }
///     public init(databaseColumn column: DatabaseColumn) throws {
///         self.init(timeIntervalSince1970: Double(try Int64(databaseColumn: column)) / 1000)
///     }
/// }
/// ```
public protocol SQLiteValueConvertible: Sendable {
    /// The value to store.
    var databaseValue: SQLiteValue { get }
    /// Reads a value from the current row's column, without copying anything the type does not keep.
    ///
    /// - Throws: ``StoreError/typeMismatch`` when the column cannot represent `Self`.
    init(databaseColumn column: SQLiteColumn) throws
}

/// The values bound to a statement's `?` parameters, in order.
///
/// A bare `nil` has no type in an array literal: write `SQLiteValue.null` or a typed optional
/// (`String?.none`, or a variable of type `String?`).
public typealias SQLiteArguments = [any SQLiteValueConvertible]

extension SQLiteValue: SQLiteValueConvertible {
    @inlinable public var databaseValue: SQLiteValue { self }
    public init(databaseColumn column: SQLiteColumn) throws { self = column.value }
}

extension Int64: SQLiteValueConvertible {
    @inlinable public var databaseValue: SQLiteValue { .integer(self) }
    @inlinable
    public init(databaseColumn column: SQLiteColumn) throws {
        guard let value = column.integer else { throw column.mismatch("Int64") }
        self = value
    }
}

extension Int: SQLiteValueConvertible {
    @inlinable public var databaseValue: SQLiteValue { .integer(Int64(self)) }
    @inlinable
    public init(databaseColumn column: SQLiteColumn) throws {
        guard let value = column.integer, let int = Int(exactly: value) else { throw column.mismatch("Int") }
        self = int
    }
}

extension Int32: SQLiteValueConvertible {
    @inlinable public var databaseValue: SQLiteValue { .integer(Int64(self)) }
    @inlinable
    public init(databaseColumn column: SQLiteColumn) throws {
        guard let wide = column.integer, let value = Int32(exactly: wide) else {
            throw column.mismatch("Int32")
        }
        self = value
    }
}

extension Bool: SQLiteValueConvertible {
    @inlinable public var databaseValue: SQLiteValue { .integer(self ? 1 : 0) }
    @inlinable
    public init(databaseColumn column: SQLiteColumn) throws {
        guard let value = column.integer else { throw column.mismatch("Bool") }
        self = value != 0
    }
}

extension Double: SQLiteValueConvertible {
    @inlinable public var databaseValue: SQLiteValue { .real(self) }
    @inlinable
    public init(databaseColumn column: SQLiteColumn) throws {
        switch column.storage {
        case .real: self = column.double
        case .integer: self = Double(column.int64)
        default: throw column.mismatch("Double")
        }
    }
}

extension String: SQLiteValueConvertible {
    @inlinable public var databaseValue: SQLiteValue { .text(self) }
    public init(databaseColumn column: SQLiteColumn) throws {
        guard column.storage == .text else { throw column.mismatch("String") }
        self = column.string
    }
}

extension [UInt8]: SQLiteValueConvertible {
    @inlinable public var databaseValue: SQLiteValue { .blob(self) }
    public init(databaseColumn column: SQLiteColumn) throws {
        guard column.storage == .blob else { throw column.mismatch("[UInt8]") }
        self = column.bytes
    }
}

extension Data: SQLiteValueConvertible {
    @inlinable public var databaseValue: SQLiteValue { .blob([UInt8](self)) }
    public init(databaseColumn column: SQLiteColumn) throws {
        guard column.storage == .blob else { throw column.mismatch("Data") }
        self = Data(column.bytes)
    }
}

extension Optional: SQLiteValueConvertible where Wrapped: SQLiteValueConvertible {
    @inlinable public var databaseValue: SQLiteValue {
        switch self {
        case .none: .null
        case .some(let value): value.databaseValue
        }
    }
    public init(databaseColumn column: SQLiteColumn) throws {
        self = column.storage == .null ? .none : .some(try Wrapped(databaseColumn: column))
    }
}
