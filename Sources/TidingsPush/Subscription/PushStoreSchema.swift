import TidingsCore

/// The tables of the push store: one row per account with its subscription keys (private key and auth secret
/// sealed with the store's `ValueCipher`, bound to their row) and what was last subscribed with the server.
///
/// The tables are durable: the keys exist only on this device, and a lost row means re-subscribing with new keys.
/// Version 2 adds `push_nextcloud_devices`: a Nextcloud account's RSA device key (sealed when the app gives a
/// cipher), its proxy registration and its connection state (``NextcloudProxyDevice``). Version 3 adds
/// `push_nextcloud_webpush`: a Nextcloud account's Web Push (UnifiedPush) subscription, its keys sealed, what it was
/// registered for and where it stands (``NextcloudWebPushDevice``).
public enum PushStoreSchema {
    static let registrations = "push_mastodon_registrations"
    static let nextcloudDevices = "push_nextcloud_devices"
    static let nextcloudWebPush = "push_nextcloud_webpush"

    /// The schema to open the push store's `SQLiteDatabase` with.
    public static let schema = SQLiteSchema(
        tables: [.durable(registrations), .durable(nextcloudDevices), .durable(nextcloudWebPush)],
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
            },
            .init(version: 2, name: "nextcloud devices") { db in
                try db.executeScript(
                    """
                    CREATE TABLE push_nextcloud_devices(
                        account TEXT PRIMARY KEY NOT NULL,
                        private_key BLOB NOT NULL, key_sealed INTEGER NOT NULL,
                        server_url TEXT, user TEXT, push_token_hash TEXT, proxy_server TEXT, registered_key TEXT,
                        user_public_key TEXT, device_identifier TEXT, signature TEXT,
                        connection TEXT NOT NULL DEFAULT 'disconnected', connection_detail TEXT,
                        last_error TEXT, updated_at INTEGER NOT NULL);
                    """)
            },
            .init(version: 3, name: "nextcloud web push") { db in
                try db.executeScript(
                    """
                    CREATE TABLE push_nextcloud_webpush(
                        account TEXT PRIMARY KEY NOT NULL,
                        private_key BLOB NOT NULL, auth BLOB NOT NULL, public_key TEXT NOT NULL,
                        endpoint TEXT, app_types TEXT, server_url TEXT, user TEXT, state TEXT,
                        last_error TEXT, updated_at INTEGER NOT NULL);
                    """)
            },
        ])
}
