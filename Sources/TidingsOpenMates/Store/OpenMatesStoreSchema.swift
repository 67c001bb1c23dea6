import TidingsCore

/// The OpenMates store's tables. Every statement is `IF NOT EXISTS`, so the same DDL both creates a new
/// file and heals a partial one (a table missing from a file whose `user_version` is current).
enum OpenMatesStoreSchema {
    /// Each table with the statements that create it and its indexes, parents before children.
    static let tables: [(name: String, durability: SQLiteSchema.Durability, sql: String)] = [
        (
            "om_chats", .disposable,
            """
            CREATE TABLE IF NOT EXISTS om_chats(
                chat_id TEXT PRIMARY KEY NOT NULL,
                messages_v INTEGER NOT NULL, title_v INTEGER NOT NULL, draft_v INTEGER NOT NULL,
                encrypted_title TEXT, last_edited INTEGER NOT NULL,
                pinned INTEGER NOT NULL, hidden INTEGER NOT NULL, archived INTEGER NOT NULL,
                parent_chat_id TEXT, is_sub INTEGER NOT NULL, unread INTEGER NOT NULL,
                chat_key TEXT, draft TEXT, details TEXT NOT NULL, hashed_id TEXT NOT NULL,
                content_v INTEGER, server_message_count INTEGER, stored_message_count INTEGER NOT NULL DEFAULT 0,
                checkpoints TEXT
            ) WITHOUT ROWID;
            CREATE INDEX IF NOT EXISTS om_chats_order ON om_chats(pinned DESC, last_edited DESC);
            """
        ),
        (
            "om_messages", .disposable,
            """
            CREATE TABLE IF NOT EXISTS om_messages(
                chat_id TEXT NOT NULL, message_id TEXT NOT NULL, role TEXT NOT NULL, created_at INTEGER NOT NULL,
                body TEXT NOT NULL, PRIMARY KEY (chat_id, message_id)
            ) WITHOUT ROWID;
            CREATE INDEX IF NOT EXISTS om_messages_order ON om_messages(chat_id, created_at);
            """
        ),
        (
            "om_embeds", .disposable,
            """
            CREATE TABLE IF NOT EXISTS om_embeds(
                embed_id TEXT PRIMARY KEY NOT NULL, hashed_chat_id TEXT, body TEXT NOT NULL) WITHOUT ROWID;
            CREATE INDEX IF NOT EXISTS om_embeds_chat ON om_embeds(hashed_chat_id);
            """
        ),
        (
            "om_embed_keys", .disposable,
            """
            CREATE TABLE IF NOT EXISTS om_embed_keys(
                key_id TEXT PRIMARY KEY NOT NULL, hashed_embed_id TEXT, hashed_chat_id TEXT, body TEXT NOT NULL
            ) WITHOUT ROWID;
            CREATE INDEX IF NOT EXISTS om_embed_keys_chat ON om_embed_keys(hashed_chat_id);
            """
        ),
        (
            "om_code_run_outputs", .disposable,
            // chat_id: the chat it belongs to (nil: it names none), so it leaves with its chat.
            """
            CREATE TABLE IF NOT EXISTS om_code_run_outputs(
                output_id TEXT PRIMARY KEY NOT NULL, chat_id TEXT, body TEXT NOT NULL) WITHOUT ROWID;
            CREATE INDEX IF NOT EXISTS om_code_run_outputs_chat ON om_code_run_outputs(chat_id);
            """
        ),
        (
            "om_suggestions", .disposable,
            "CREATE TABLE IF NOT EXISTS om_suggestions(suggestion_id TEXT PRIMARY KEY NOT NULL, body TEXT NOT NULL) WITHOUT ROWID;"
        ),
        (
            "om_daily_inspirations", .disposable,
            "CREATE TABLE IF NOT EXISTS om_daily_inspirations(inspiration_id TEXT PRIMARY KEY NOT NULL, body TEXT NOT NULL) WITHOUT ROWID;"
        ),
        // Where offline prefetch continues (Prefetch/): disposable, a lost cursor only restarts the pass.
        (
            "om_prefetch_state", .disposable,
            "CREATE TABLE IF NOT EXISTS om_prefetch_state(name TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL) WITHOUT ROWID;"
        ),
        // Chats the server deleted: durable, since losing one would let a stale record resurrect the chat.
        (
            "om_tombstones", .durable,
            "CREATE TABLE IF NOT EXISTS om_tombstones(chat_id TEXT PRIMARY KEY NOT NULL, deleted_at INTEGER NOT NULL) WITHOUT ROWID;"
        ),
        // What the user did offline: only this device has it.
        (
            "om_pending_actions", .durable,
            """
            CREATE TABLE IF NOT EXISTS om_pending_actions(
                action_id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, chat_id TEXT NOT NULL,
                payload TEXT NOT NULL, tries INTEGER NOT NULL DEFAULT 0, last_error TEXT
            );
            """
        ),
        // Offline actions that failed for good, until the user dismisses them: only this device has the reason.
        ("om_failed_actions", .durable, failedActionsSQL),
    ]

    static let failedActionsSQL = """
        CREATE TABLE IF NOT EXISTS om_failed_actions(
            action_id INTEGER PRIMARY KEY NOT NULL, kind TEXT NOT NULL, chat_id TEXT NOT NULL,
            payload TEXT NOT NULL, tries INTEGER NOT NULL, reason TEXT NOT NULL
        );
        """

    static let schema = SQLiteSchema(
        tables: tables.map { $0.durability == .durable ? .durable($0.name) : .disposable($0.name) },
        migrations: [
            .init(version: 1, name: "openmates store") { db in
                for table in tables { try db.executeScript(table.sql) }
            },
            // Stores written before failed actions were kept get the table in place, their data untouched.
            .init(version: 2, name: "failed offline actions") { db in try db.executeScript(failedActionsSQL) },
            // Code-run outputs get the chat they belong to, in place and keeping their rows (a new file has the
            // column from version 1); the store links the existing rows when it opens (their bodies may be sealed).
            .init(version: 3, name: "code-run outputs by chat") { db in
                let columns = try db.fetchAll("PRAGMA table_info(om_code_run_outputs)") { row -> String in try row[1] }
                if !columns.contains("chat_id") {
                    try db.execute("ALTER TABLE om_code_run_outputs ADD COLUMN chat_id TEXT")
                }
                try db.execute(
                    "CREATE INDEX IF NOT EXISTS om_code_run_outputs_chat ON om_code_run_outputs(chat_id)")
            },
        ])
}
