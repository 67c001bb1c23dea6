import TidingsCore

/// What the store's SIGKILL crash test and its writer child (Tests/StoreCrashWriter) agree on, declared
/// once so the two cannot drift apart: the table the child writes and the checksum it stores with each row.
public enum StoreCrashOutbox {
    /// The outbox table: a sealed payload, a creation time and the payload's ``checksum(_:)``.
    public static let schema = SQLiteSchema(
        tables: [.durable("outbox")],
        migrations: [
            .init(version: 1, name: "outbox") { db in
                try db.execute(
                    """
                    CREATE TABLE outbox(
                        id INTEGER PRIMARY KEY, payload BLOB NOT NULL, created_at INTEGER NOT NULL,
                        checksum INTEGER NOT NULL)
                    """)
            }
        ])

    /// The first 8 bytes of SHA-256 of `bytes` as a signed integer: the child stores it with the payload, the
    /// test recomputes it from the decrypted payload to find a half-written row.
    public static func checksum(_ bytes: [UInt8]) -> Int64 {
        TidingsCrypto.SHA256.hash(bytes).prefix(8).reduce(Int64(0)) { ($0 << 8) | Int64($1) }
    }
}
