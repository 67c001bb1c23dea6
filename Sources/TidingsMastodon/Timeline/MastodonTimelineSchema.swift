import TidingsCore

/// The tables of the Mastodon store and the migrations that build them.
///
/// Caches of server data (statuses, timeline entries, tombstones, notifications) are disposable: a migration
/// or a recovery may rebuild them empty, and the next sync refills them. Accounts and the outbox of unsent
/// actions are durable: only this device has them, so recovery copies them into a replacement file.
public enum MastodonTimelineSchema {
    static let statuses = "mastodon_statuses"
    static let entries = "mastodon_timeline_entries"
    static let tombstones = "mastodon_tombstones"
    static let notifications = "mastodon_notifications"
    static let accounts = "mastodon_accounts"
    static let outbox = "mastodon_outbox"
    static let cursors = "mastodon_timeline_cursors"
    static let notificationGroups = "mastodon_notification_groups"
    static let relationships = "mastodon_relationships"

    /// The schema to open a `SQLiteDatabase` with.
    public static let schema = SQLiteSchema(
        tables: [
            .disposable(statuses), .disposable(entries), .disposable(tombstones), .disposable(notifications),
            .durable(accounts), .durable(outbox), .disposable(cursors), .disposable(notificationGroups),
            SQLiteMarkerStorage.table, .disposable(relationships),
        ],
        migrations: [
            .init(version: 1, name: "mastodon timelines") { db in
                // Positions are not unique in the schema: a gap fill shifts a run of positions in one UPDATE,
                // which a unique index would reject half way; the store keeps them distinct itself.
                try db.executeScript(
                    """
                    CREATE TABLE mastodon_statuses(
                        account TEXT NOT NULL, status_id TEXT NOT NULL, payload BLOB NOT NULL,
                        fetched_at INTEGER NOT NULL, edited INTEGER NOT NULL DEFAULT 0,
                        PRIMARY KEY(account, status_id)) WITHOUT ROWID;
                    CREATE INDEX mastodon_statuses_fetched ON mastodon_statuses(fetched_at);
                    CREATE TABLE mastodon_timeline_entries(
                        account TEXT NOT NULL, timeline TEXT NOT NULL, position INTEGER NOT NULL,
                        status_id TEXT, gap_state INTEGER,
                        CHECK ((status_id IS NULL) <> (gap_state IS NULL)),
                        UNIQUE(account, timeline, status_id));
                    CREATE INDEX mastodon_entries_position ON mastodon_timeline_entries(account, timeline, position);
                    CREATE INDEX mastodon_entries_status ON mastodon_timeline_entries(account, status_id);
                    CREATE TABLE mastodon_tombstones(
                        account TEXT NOT NULL, status_id TEXT NOT NULL, deleted_at INTEGER NOT NULL,
                        PRIMARY KEY(account, status_id)) WITHOUT ROWID;
                    CREATE TABLE mastodon_notifications(
                        account TEXT NOT NULL, notification_id TEXT NOT NULL, status_id TEXT,
                        payload BLOB NOT NULL, fetched_at INTEGER NOT NULL,
                        PRIMARY KEY(account, notification_id));
                    CREATE INDEX mastodon_notifications_status ON mastodon_notifications(account, status_id);
                    CREATE TABLE mastodon_accounts(
                        account TEXT PRIMARY KEY NOT NULL, server TEXT NOT NULL, created_at INTEGER NOT NULL);
                    CREATE TABLE mastodon_outbox(
                        id INTEGER PRIMARY KEY, account TEXT NOT NULL, action TEXT NOT NULL,
                        target_id TEXT NOT NULL, created_at INTEGER NOT NULL);
                    """)
            },
            .init(version: 2, name: "mastodon engine") { db in
                // Additive only: the durable outbox and accounts are never rebuilt by a migration.
                try db.executeScript(
                    """
                    CREATE TABLE mastodon_timeline_cursors(
                        account TEXT NOT NULL, timeline TEXT NOT NULL, side TEXT NOT NULL,
                        cursor_id TEXT NOT NULL, anchor_id TEXT, needs_gap INTEGER NOT NULL DEFAULT 0,
                        PRIMARY KEY(account, timeline, side)) WITHOUT ROWID;
                    CREATE TABLE mastodon_notification_groups(
                        account TEXT NOT NULL, group_key TEXT NOT NULL, most_recent_id TEXT NOT NULL,
                        payload BLOB NOT NULL, fetched_at INTEGER NOT NULL,
                        PRIMARY KEY(account, group_key)) WITHOUT ROWID;
                    CREATE INDEX mastodon_outbox_account ON mastodon_outbox(account, id);
                    """)
                try SQLiteMarkerStorage.createTable(db)
            },
            .init(version: 3, name: "mastodon relationships") { db in
                // The reader's relationship with other accounts: the server's last answer (`server_*`, null
                // before one) and what is shown, that answer with the pending follow actions of the outbox
                // over it. Disposable: the outbox (durable) is what keeps an unsent follow.
                try db.executeScript(
                    """
                    CREATE TABLE mastodon_relationships(
                        account TEXT NOT NULL, target_id TEXT NOT NULL,
                        following INTEGER NOT NULL, requested INTEGER NOT NULL,
                        server_following INTEGER, server_requested INTEGER, updated_at INTEGER NOT NULL,
                        PRIMARY KEY(account, target_id)) WITHOUT ROWID;
                    """)
            },
        ])
}
