import TidingsCore

/// The tables of the push store: one row per account with its subscription keys (private key and auth secret
/// sealed with the store's `ValueCipher`, bound to their row) and what was last subscribed with the server.
///
/// The table is durable: the keys exist only on this device, and a lost row means re-subscribing with new keys.
public enum PushStoreSchema {
    static let registrations = "push_mastodon_registrations"

    /// The schema to open the push store's `SQLiteDatabase` with.
    public static let schema = SQLiteSchema(
        tables: [.durable(registrations)],
        migrations: [
            .init(version: 1, name: "push registrations") { db in
                try db.executeScript(
                    """
                    CREATE TABLE push_mastodon_registrations(
                        account TEXT PRIMARY KEY NOT NULL,
                        private_key BLOB NOT NULL, auth BLOB NOT NULL, public_key TEXT NOT NULL,
                        subscribed_endpoint TEXT, subscribed_public_key TEXT, subscribed_alerts TEXT,
                        subscribed_policy TEXT, server_id TEXT, server_key TEXT, standard INTEGER,
                        last_error TEXT, updated_at INTEGER NOT NULL);
                    """)
            }
        ])
}
