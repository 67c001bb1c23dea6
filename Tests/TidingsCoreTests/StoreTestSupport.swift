import Foundation
import TidingsCore

/// A unique temporary directory for one test, removed when the value is released.
final class StoreTemporaryDirectory: Sendable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("tidings-store-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// The path of `name` inside the directory.
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// The names of the files in the directory, sorted.
    func files() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
    }
}

/// The schema most store tests use: a durable outbox and settings, a disposable message cache.
enum TestSchema {
    static let tables: [SQLiteSchema.Table] = [
        .durable("settings"), .durable("outbox"), .disposable("messages"),
    ]

    static let version1 = SQLiteSchema.Migration(version: 1, name: "create") { db in
        try db.executeScript(
            """
            CREATE TABLE settings(key TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE outbox(id INTEGER PRIMARY KEY, payload BLOB NOT NULL, created_at INTEGER NOT NULL);
            CREATE TABLE messages(id TEXT PRIMARY KEY, body TEXT, seen INTEGER NOT NULL DEFAULT 0);
            """)
    }

    static let schema = SQLiteSchema(tables: tables, migrations: [version1])

    /// Overwrites the root page of the messages primary-key index with `fill` bytes: the table data, the
    /// other tables and the key check stay readable, `quick_check` does not.
    /// - Returns: The damaged page number (0 or 1 means the index was not found and nothing was written).
    @discardableResult
    static func damageMessagesIndex(_ path: String, fill: UInt8 = 0xA5, schema: SQLiteSchema = schema) throws -> Int {
        let (pageSize, rootPage) = try SQLiteDatabase(path: path, schema: schema).read { db in
            (
                try db.fetchOne(Int.self, "PRAGMA page_size") ?? 4096,
                try db.fetchOne(
                    Int.self, "SELECT rootpage FROM sqlite_master WHERE name = 'sqlite_autoindex_messages_1'") ?? 0
            )
        }
        guard rootPage > 1 else { return rootPage }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seek(toOffset: UInt64(pageSize * (rootPage - 1)))
        handle.write(Data(repeating: fill, count: pageSize))
        try handle.close()
        return rootPage
    }
}
