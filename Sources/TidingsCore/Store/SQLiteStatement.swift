import CSQLite

/// A prepared SQLite statement, owned by one connection and used only under its lock.
@usableFromInline
final class SQLiteStatement {
    let handle: OpaquePointer
    @usableFromInline let sql: String
    @usableFromInline let parameterCount: Int
    let columnCount: Int
    let isReadOnly: Bool
    /// True while a caller is stepping it, so a nested use of the same SQL prepares a fresh statement.
    var isInUse = false
    /// True when text or a blob is bound: SQLite keeps copies of those until they are cleared.
    private var holdsCopies = false

    init(connection: OpaquePointer, sql: String) throws(StoreError) {
        var statement: OpaquePointer?
        var tail: UnsafePointer<CChar>?
        let code = sql.withCString { text in
            // SQLITE_PREPARE_PERSISTENT: these statements live in the cache for the connection's lifetime.
            sqlite3_prepare_v2(connection, text, -1, &statement, &tail)
        }
        guard code == SQLITE_OK else {
            sqlite3_finalize(statement)
            throw StoreError.fromSQLite(code, connection: connection, sql: sql)
        }
        guard let statement else {
            throw StoreError.misuse("no statement in SQL (empty or only comments)", sql: sql)
        }
        if let tail, tail.pointee != 0, !String(cString: tail).allSatisfy({ $0.isWhitespace || $0 == ";" }) {
            sqlite3_finalize(statement)
            throw StoreError.misuse("more than one statement; use executeScript for several", sql: sql)
        }
        self.handle = statement
        self.sql = sql
        self.parameterCount = Int(sqlite3_bind_parameter_count(statement))
        self.columnCount = Int(sqlite3_column_count(statement))
        self.isReadOnly = sqlite3_stmt_readonly(statement) != 0
    }

    deinit { sqlite3_finalize(handle) }

    /// Binds `arguments` to the parameters in order; the count must match exactly.
    func bind(_ arguments: SQLiteArguments) throws(StoreError) {
        guard arguments.count == parameterCount else {
            throw StoreError.misuse("\(arguments.count) arguments for \(parameterCount) parameters", sql: sql)
        }
        // Indexing borrows each existential; `enumerated()` would copy it.
        var index = 0
        while index < arguments.count {
            try bind(arguments[index].databaseValue, at: Int32(truncatingIfNeeded: index + 1))
            index += 1
        }
    }

    @usableFromInline
    func bind(_ value: SQLiteValue, at index: Int32) throws(StoreError) {
        let code: Int32
        switch value {
        case .null: code = sqlite3_bind_null(handle, index)
        case .integer(let integer): code = sqlite3_bind_int64(handle, index, integer)
        case .real(let real): code = sqlite3_bind_double(handle, index, real)
        case .text(var text):
            holdsCopies = true
            code = text.withUTF8 { utf8 in
                // An empty buffer may have no address, and a NULL pointer would bind SQL NULL, not ''.
                guard let base = utf8.baseAddress, !utf8.isEmpty else {
                    return sqlite3_bind_text(handle, index, "", 0, csqlite_transient())
                }
                return base.withMemoryRebound(to: CChar.self, capacity: utf8.count) { chars in
                    sqlite3_bind_text64(
                        handle, index, chars, sqlite3_uint64(utf8.count), csqlite_transient(), UInt8(SQLITE_UTF8))
                }
            }
        case .blob(let bytes):
            holdsCopies = true
            code = bytes.withUnsafeBytes { raw in
                // Same reason as text: an empty blob must stay a blob, not become NULL.
                guard let base = raw.baseAddress, !raw.isEmpty else { return sqlite3_bind_zeroblob(handle, index, 0) }
                return sqlite3_bind_blob64(handle, index, base, sqlite3_uint64(raw.count), csqlite_transient())
            }
        }
        guard code == SQLITE_OK else {
            throw StoreError.fromSQLite(code, connection: sqlite3_db_handle(handle), sql: sql)
        }
    }

    /// Clears the previous run's state so the statement can run again with new arguments.
    func reset() {
        sqlite3_reset(handle)
        // Drop the copies of bound text and blobs now rather than at the next use: they may be secrets.
        if holdsCopies {
            sqlite3_clear_bindings(handle)
            holdsCopies = false
        }
    }
}
