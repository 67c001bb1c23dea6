import CSQLite

/// A `SQLiteConnection` runs SQL on an open store; you get one inside ``SQLiteDatabase/write(_:)-1t7wp`` and
/// ``SQLiteDatabase/read(_:)-63imq`` (or their async forms).
///
/// Statements are prepared once per SQL text and cached for the connection's lifetime, so running the same
/// SQL again costs only binding and stepping. Arguments bind to `?` parameters in order; the count must match.
///
/// - Warning: The connection is valid only inside the closure it was passed to, on that closure's thread.
///   Don't store it or hand it to another task.
public final class SQLiteConnection {
    let handle: OpaquePointer
    private var cache: [String: SQLiteStatement] = [:]
    /// The statement used last: loops run one SQL text over and over, and comparing a string with itself is
    /// cheaper than hashing it.
    private var lastStatement: SQLiteStatement?
    /// False inside `read { }`: statements that would write are refused before they run.
    var allowsWrites = true
    /// How many statements were prepared (compiled) so far; the cache keeps this from growing with use.
    private(set) var preparedStatementCount = 0

    /// How many statements the cache holds now.
    var cachedStatementCount: Int { cache.count }

    /// The cache bound: a program with more distinct SQL texts than this builds SQL dynamically, and keeping
    /// every variant would grow without limit.
    private static let cacheLimit = 512

    init(handle: OpaquePointer) {
        self.handle = handle
    }

    /// Finalizes every cached statement; must run before the handle is closed.
    func finalizeStatements() {
        lastStatement = nil
        cache.removeAll()
    }

    // MARK: Running statements

    /// Runs one SQL statement with `arguments`, discarding any result rows.
    ///
    /// For example:
    ///
    /// ```swift
    /// try db.execute("INSERT INTO drafts(id, body) VALUES (?, ?)", [id, body])
    /// ```
    ///
    /// - Throws: ``StoreError`` from SQLite (`constraint`, `busy`, `full`…), `misuse` for a wrong argument
    ///   count or several statements, `readOnly` for a write inside `read { }`.
    public func execute(_ sql: String, _ arguments: SQLiteArguments = []) throws {
        try withStatement(sql, arguments) { statement in try run(statement) }
    }

    /// Runs one SQL statement with `values` bound in order, building no array: the cheapest way to run the
    /// same statement many times in a loop.
    ///
    /// For example:
    ///
    /// ```swift
    /// for message in page { try db.execute("INSERT INTO messages(id, body) VALUES (?, ?)", values: message.id, message.body) }
    /// ```
    ///
    /// - Throws: as ``execute(_:_:)``.
    @inlinable
    public func execute<each Value: SQLiteValueConvertible>(_ sql: String, values: repeat each Value) throws {
        // Inlinable so the caller's concrete types are bound directly: no array, no existential boxes, and no
        // closure, which would copy the pack into a context on every call.
        let statement = try acquireStatement(sql)
        defer { releaseStatement(statement) }
        var count = 0
        for _ in repeat (each Value).self { count += 1 }
        guard count == statement.parameterCount else {
            throw StoreError.misuse("\(count) arguments for \(statement.parameterCount) parameters", sql: sql)
        }
        var index: Int32 = 0
        func next() -> Int32 {
            index += 1
            return index
        }
        repeat try statement.bind((each values).databaseValue, at: next())
        try run(statement)
    }

    @usableFromInline
    func run(_ statement: SQLiteStatement) throws {
        while true {
            let code = sqlite3_step(statement.handle)
            if code == SQLITE_DONE { return }
            if code != SQLITE_ROW { throw StoreError.fromSQLite(code, connection: handle, sql: statement.sql) }
        }
    }

    /// Runs several `;`-separated statements with no arguments (schema scripts in migrations).
    ///
    /// - Throws: ``StoreError`` from the first statement that fails; earlier ones stay applied unless the
    ///   surrounding transaction rolls back.
    public func executeScript(_ sql: String) throws {
        guard allowsWrites else { throw StoreError(.readOnly, message: "executeScript inside read { }", sql: sql) }
        var errorMessage: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        let message = errorMessage.map { String(cString: $0) }
        sqlite3_free(errorMessage)
        guard code == SQLITE_OK else {
            let error = StoreError.fromSQLite(code, connection: handle, sql: sql)
            throw StoreError(
                error.code, resultCode: code, message: message ?? error.message, sql: sql)
        }
    }

    /// Runs a query and calls `body` with each result row, read in place without per-row allocation.
    ///
    /// For example:
    ///
    /// ```swift
    /// try db.forEachRow("SELECT id, body FROM drafts WHERE account = ?", [account]) { row in
    ///     let id: Int64 = try row[0]
    ///     let body: String = try row[1]
    /// }
    /// ```
    ///
    /// - Warning: `row` is valid only during its call to `body`.
    /// - Throws: ``StoreError`` from SQLite or from reading columns, or whatever `body` throws; iteration
    ///   stops at the first error.
    public func forEachRow(
        _ sql: String, _ arguments: SQLiteArguments = [], _ body: (SQLiteRow) throws -> Void
    ) throws {
        try withStatement(sql, arguments) { statement in
            let row = SQLiteRow(statement: statement.handle, count: statement.columnCount)
            while true {
                let code = sqlite3_step(statement.handle)
                if code == SQLITE_ROW {
                    try body(row)
                } else if code == SQLITE_DONE {
                    return
                } else {
                    throw StoreError.fromSQLite(code, connection: handle, sql: sql)
                }
            }
        }
    }

    /// Runs a query and returns one value per row, built by `decode`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let drafts = try db.fetchAll("SELECT id, body FROM drafts") { row in
    ///     Draft(id: try row[0], body: try row[1])
    /// }
    /// ```
    ///
    /// - Throws: as ``forEachRow(_:_:_:)``.
    public func fetchAll<T>(
        _ sql: String, _ arguments: SQLiteArguments = [], _ decode: (SQLiteRow) throws -> T
    ) throws -> [T] {
        var values: [T] = []
        try forEachRow(sql, arguments) { values.append(try decode($0)) }
        return values
    }

    /// Runs a query and returns its first column, read as `T`, for every row.
    ///
    /// - Throws: as ``forEachRow(_:_:_:)``; `typeMismatch` when a value is not a `T` (use `T?` for `NULL`s).
    public func fetchAll<T: SQLiteValueConvertible>(
        _ type: T.Type, _ sql: String, _ arguments: SQLiteArguments = []
    ) throws -> [T] {
        try fetchAll(sql, arguments) { row in try row[0] as T }
    }

    /// Runs a query and returns the first row built by `decode`, or `nil` when there is no row.
    ///
    /// - Throws: as ``forEachRow(_:_:_:)``.
    public func fetchOne<T>(
        _ sql: String, _ arguments: SQLiteArguments = [], _ decode: (SQLiteRow) throws -> T
    ) throws -> T? {
        try withStatement(sql, arguments) { statement in
            let code = sqlite3_step(statement.handle)
            if code == SQLITE_ROW {
                return try decode(SQLiteRow(statement: statement.handle, count: statement.columnCount))
            }
            if code == SQLITE_DONE { return nil }
            throw StoreError.fromSQLite(code, connection: handle, sql: sql)
        }
    }

    /// Runs a query and returns the first column of its first row as `T`, or `nil` when there is no row.
    ///
    /// For example: `let count = try db.fetchOne(Int.self, "SELECT count(*) FROM outbox") ?? 0`.
    ///
    /// - Throws: as ``forEachRow(_:_:_:)``; `typeMismatch` when the value is not a `T`.
    public func fetchOne<T: SQLiteValueConvertible>(
        _ type: T.Type, _ sql: String, _ arguments: SQLiteArguments = []
    ) throws -> T? {
        try fetchOne(sql, arguments) { row in try row[0] as T }
    }

    // MARK: Connection state

    /// The rowid of the most recent successful `INSERT` on this connection.
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// The number of rows changed by the most recent `INSERT`, `UPDATE` or `DELETE`.
    public var changes: Int { Int(sqlite3_changes64(handle)) }

    /// True while a transaction is open.
    public var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// The schema version stored in the file header (`PRAGMA user_version`).
    public func userVersion() throws -> Int {
        try fetchOne("PRAGMA user_version") { row in
            try Int(databaseColumn: row.column(0))
        } ?? 0
    }

    /// True when a table (not a view) with that exact name exists in the main database.
    public func tableExists(_ name: String) throws -> Bool {
        try fetchOne("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [name]) { _ in true } ?? false
    }

    /// The column names of `table`, in declaration order (empty when the table does not exist).
    public func columnNames(of table: String) throws -> [String] {
        try fetchAll("SELECT name FROM pragma_table_info(?)", [table]) { row in
            try String(databaseColumn: row.column(0))
        }
    }

    // MARK: Statements

    func withStatement<R>(
        _ sql: String, _ arguments: SQLiteArguments, _ body: (SQLiteStatement) throws -> R
    ) throws -> R {
        try withStatement(sql, { statement throws(StoreError) in try statement.bind(arguments) }, body)
    }

    /// Prepares (or reuses) the statement for `sql`, binds with `bind`, runs `body`, then resets it.
    func withStatement<R>(
        _ sql: String, _ bind: (SQLiteStatement) throws(StoreError) -> Void, _ body: (SQLiteStatement) throws -> R
    ) throws -> R {
        let statement = try acquireStatement(sql)
        defer { releaseStatement(statement) }
        try bind(statement)
        return try body(statement)
    }

    /// The cached statement for `sql` (prepared on first use), marked in use; pair with ``releaseStatement(_:)``.
    @usableFromInline
    func acquireStatement(_ sql: String) throws -> SQLiteStatement {
        let statement: SQLiteStatement
        if let last = lastStatement, !last.isInUse, last.sql == sql {
            statement = last
        } else if let cached = cache[sql], !cached.isInUse {
            statement = cached
            lastStatement = cached
        } else {
            statement = try SQLiteStatement(connection: handle, sql: sql)
            preparedStatementCount += 1
            // A statement still stepping (a nested use of the same SQL) keeps its cache slot.
            if cache[sql] == nil {
                if cache.count >= Self.cacheLimit { cache = cache.filter { $0.value.isInUse } }
                cache[sql] = statement
                lastStatement = statement
            }
        }
        guard allowsWrites || statement.isReadOnly else {
            throw StoreError(.readOnly, message: "a statement that writes, inside read { }", sql: sql)
        }
        statement.isInUse = true
        return statement
    }

    /// Resets `statement` for its next use and returns it to the cache.
    @usableFromInline
    func releaseStatement(_ statement: SQLiteStatement) {
        statement.reset()
        statement.isInUse = false
    }
}
