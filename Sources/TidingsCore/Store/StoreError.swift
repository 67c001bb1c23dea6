import CSQLite

/// A `StoreError` describes why the store refused or failed an operation.
///
/// It carries the SQLite result code and message when SQLite produced it, and the SQL text of the
/// statement involved — never the values bound to it, since those may be secrets or message content.
/// Catch it by kind:
///
/// ```swift
/// do { try database.write { try $0.execute("INSERT INTO accounts(id) VALUES (?)", [id]) } }
/// catch StoreError.constraint { /* duplicate */ }
/// ```
public struct StoreError: TidingsError {
    enum Code: String, Sendable, Equatable {
        case notADatabase, corrupt, busy, constraint, wrongKey, damagedKeyCheck, tampered, wrongRow
        case schemaTooNew, misuse, typeMismatch, migrationFailed, readOnly, cannotOpen, io, full, sqlite
        case suspended
    }

    let code: Code

    /// The kind of failure (compare with the static members, e.g. `error == .busy`).
    public var kind: TidingsErrorKind { TidingsErrorKind(code) }

    /// The SQLite primary or extended result code, when SQLite reported the failure.
    public let resultCode: Int32?
    /// A human-readable explanation (from SQLite or from Tidings). Contains no bound values.
    public let message: String
    /// The SQL text of the statement involved, when there was one. Bound values are never included.
    public let sql: String?
    /// For `schemaTooNew`: the `user_version` found in the file.
    public let foundVersion: Int?
    /// For `schemaTooNew`: the newest version this code knows.
    public let knownVersion: Int?

    init(
        _ code: Code, resultCode: Int32? = nil, message: String = "", sql: String? = nil,
        foundVersion: Int? = nil, knownVersion: Int? = nil
    ) {
        self.code = code
        self.resultCode = resultCode
        self.message = message
        self.sql = sql
        self.foundVersion = foundVersion
        self.knownVersion = knownVersion
    }

    /// The file is not an SQLite database (random bytes, a truncated header, another format).
    public static let notADatabase = StoreError(.notADatabase)
    /// The database file is damaged (`SQLITE_CORRUPT` or a failed `PRAGMA quick_check`).
    public static let corrupt = StoreError(.corrupt)
    /// Another connection held a lock for longer than the busy timeout; or, when opening, the file needs
    /// replacing (it is damaged or too new) while another connection — in this process or another (the app,
    /// its extension, the CLI) — has it open, so it was left alone. Retrying later is the remedy for both.
    public static let busy = StoreError(.busy)
    /// A `UNIQUE`, `NOT NULL`, `CHECK` or foreign-key constraint refused the change; nothing was written.
    public static let constraint = StoreError(.constraint)
    /// The key given to open an encrypted store is not the key it was created with.
    public static let wrongKey = StoreError(.wrongKey)
    /// The store's key-check record is damaged, while the key is the store's (its key identifier matches): the
    /// file was left alone; it is not a wrong passphrase.
    public static let damagedKeyCheck = StoreError(.damagedKeyCheck)
    /// An encrypted value failed authentication: its bytes were changed after sealing.
    public static let tampered = StoreError(.tampered)
    /// An encrypted value was sealed for a different row or table than the one it was read from.
    public static let wrongRow = StoreError(.wrongRow)
    /// The file's schema (`user_version`) is newer than this code knows; see `foundVersion`, `knownVersion`.
    public static let schemaTooNew = StoreError(.schemaTooNew)
    /// The API was used in a way it does not allow (wrong argument count, writing inside `read`, re-entrancy).
    public static let misuse = StoreError(.misuse)
    /// A column held a value that cannot be read as the requested Swift type (e.g. `NULL` as `Int`).
    public static let typeMismatch = StoreError(.typeMismatch)
    /// A migration step failed and was rolled back; the file was left as it was.
    public static let migrationFailed = StoreError(.migrationFailed)
    /// A write was attempted through a read-only access (`read { }`) or on a read-only file.
    public static let readOnly = StoreError(.readOnly)
    /// The file could not be opened or created (missing directory, permissions).
    public static let cannotOpen = StoreError(.cannotOpen)
    /// The operating system reported an I/O error.
    public static let io = StoreError(.io)
    /// The disk or the database is full.
    public static let full = StoreError(.full)
    /// Any other SQLite failure; see `resultCode` and `message`.
    public static let sqlite = StoreError(.sqlite)
    /// The store is suspended (``SQLiteDatabase/suspend()-8l8d6``) and its configuration says that an access asked
    /// for meanwhile fails at once (``SQLiteDatabase/SuspendedAccess/fail``): nothing was read or written, and
    /// the closure did not run. Retry after ``SQLiteDatabase/resume()-600f7``.
    public static let suspended = StoreError(.suspended)

    /// Builds a `schemaTooNew` error for a file at version `found` when the code knows up to `known`.
    public static func schemaTooNew(found: Int, known: Int) -> StoreError {
        StoreError(
            .schemaTooNew, message: "schema version \(found) is newer than the known \(known)",
            foundVersion: found, knownVersion: known)
    }

    /// The kind, result code, message and SQL text (never bound values).
    public var description: String {
        var text = shortDescription
        if let resultCode { text += " (SQLite \(resultCode))" }
        if !message.isEmpty { text += ": \(message)" }
        if let sql { text += " — in `\(sql)`" }
        return text
    }
}

extension StoreError {
    /// Maps an SQLite result code, with the connection's message, to a `StoreError`.
    static func fromSQLite(_ resultCode: Int32, connection: OpaquePointer?, sql: String? = nil) -> StoreError {
        var message = ""
        if let connection, let text = sqlite3_errmsg(connection) {
            message = String(cString: text)
        } else if let text = sqlite3_errstr(resultCode) {
            message = String(cString: text)
        }
        return StoreError(code(for: resultCode), resultCode: resultCode, message: message, sql: sql)
    }

    static func code(for resultCode: Int32) -> Code {
        switch resultCode & 0xFF {
        case SQLITE_NOTADB: .notADatabase
        case SQLITE_CORRUPT: .corrupt
        case SQLITE_BUSY, SQLITE_LOCKED: .busy
        case SQLITE_CONSTRAINT: .constraint
        case SQLITE_MISUSE, SQLITE_RANGE: .misuse
        case SQLITE_READONLY: .readOnly
        case SQLITE_CANTOPEN, SQLITE_PERM, SQLITE_AUTH: .cannotOpen
        case SQLITE_IOERR: .io
        case SQLITE_FULL: .full
        case SQLITE_MISMATCH: .typeMismatch
        default: .sqlite
        }
    }

    @usableFromInline
    static func misuse(_ message: String, sql: String? = nil) -> StoreError {
        StoreError(.misuse, message: message, sql: sql)
    }

    @usableFromInline
    static func typeMismatch(_ message: String) -> StoreError {
        StoreError(.typeMismatch, message: message)
    }
}
