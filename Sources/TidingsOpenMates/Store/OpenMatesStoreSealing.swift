import TidingsCore

/// How the OpenMates store keeps its sensitive columns: in clear without a key, sealed with TidingsCore's
/// `ValueCipher` (AES-256-GCM, bound to table, column and row) with one.
///
/// Sealed: chats' titles, wrapped chat keys, drafts, merged details and compression checkpoints; message
/// bodies; embeds and embed keys; code-run outputs; suggestions; daily inspirations; pending and failed actions' payloads.
/// In clear (the sync and the list order need them): chat and message IDs, versions, timestamps, roles, flags,
/// hashed chat IDs, tombstones.
struct OpenMatesStoreSealing: Sendable {
    let cipher: ValueCipher?

    /// Every sealed column: its table, column, the SQL expression of the row ID it is bound to, and the
    /// table's primary key (the tables have no `rowid`).
    static let columns: [(table: String, column: String, rowID: String, key: [String])] = [
        ("om_chats", "encrypted_title", "chat_id", ["chat_id"]), ("om_chats", "chat_key", "chat_id", ["chat_id"]),
        ("om_chats", "draft", "chat_id", ["chat_id"]), ("om_chats", "details", "chat_id", ["chat_id"]),
        ("om_chats", "checkpoints", "chat_id", ["chat_id"]),
        ("om_messages", "body", messageRowIDSQL, ["chat_id", "message_id"]),
        ("om_embeds", "body", "embed_id", ["embed_id"]), ("om_embed_keys", "body", "key_id", ["key_id"]),
        ("om_code_run_outputs", "body", "output_id", ["output_id"]),
        ("om_suggestions", "body", "suggestion_id", ["suggestion_id"]),
        ("om_daily_inspirations", "body", "inspiration_id", ["inspiration_id"]),
        ("om_pending_actions", "payload", "action_id", ["action_id"]),
        ("om_failed_actions", "payload", "action_id", ["action_id"]),
    ]

    /// A message's row ID: the chat ID's length, a colon, the chat ID, then the message ID (unambiguous).
    static func messageRowID(chatID: String, messageID: String) -> String {
        "\(chatID.utf8.count):\(chatID)\(messageID)"
    }
    /// ``messageRowID(chatID:messageID:)`` in SQL (`length` counts characters, so the UTF-8 length is taken
    /// from the blob of the text).
    static let messageRowIDSQL = "length(CAST(chat_id AS BLOB)) || ':' || chat_id || message_id"

    /// The value to store for `text` at (`table`, `column`, `rowID`): text without a key, a sealed blob with one.
    func seal(_ text: String?, _ table: String, _ column: String, rowID: some SQLiteValueConvertible) throws
        -> SQLiteValue
    {
        guard let text else { return .null }
        guard let cipher else { return .text(text) }
        return try cipher.seal(text, table: table, column: column, rowID: rowID).databaseValue
    }

    /// The text stored at (`table`, `column`, `rowID`).
    ///
    /// - Throws: `StoreError.tampered` / `.wrongRow` when a sealed value does not open; ``OpenMatesError/store``
    ///   when a sealed value is read without a key, or a value in clear is found in an encrypted store (it was
    ///   written by someone without the key).
    func open(_ value: SQLiteValue, _ table: String, _ column: String, rowID: some SQLiteValueConvertible) throws
        -> String?
    {
        switch (value, cipher) {
        case (.null, _): return nil
        case (.text(let text), nil): return text
        case (.blob(let bytes), let cipher?):
            return try cipher.openString(SealedValue(bytes: bytes), table: table, column: column, rowID: rowID)
        case (.blob, nil):
            throw OpenMatesError(
                .store, operation: "store.read", detail: "\(table).\(column) is encrypted: open the store with its key")
        default:
            throw OpenMatesError(
                .store, operation: "store.read", detail: "\(table).\(column) holds a value not sealed with the key")
        }
    }

    /// Seals, in place, every value stored in clear (a store written without a key, now opened with one).
    /// Returns how many values were sealed.
    func sealValuesInClear(_ db: SQLiteConnection) throws -> Int {
        guard let cipher else { return 0 }
        var sealed = 0
        for spec in Self.columns {
            let keys = spec.key.joined(separator: ", ")
            let rows = try db.fetchAll(
                """
                SELECT \(spec.rowID), \(spec.column), \(keys) FROM \(spec.table)
                WHERE typeof(\(spec.column)) = 'text'
                """
            ) { row -> (SQLiteValue, String, [SQLiteValue]) in
                (try row[0], try row[1], try spec.key.indices.map { index -> SQLiteValue in try row[2 + index] })
            }
            let match = spec.key.map { "\($0) = ?" }.joined(separator: " AND ")
            for (rowID, text, key) in rows {
                let value = try cipher.seal(text, table: spec.table, column: spec.column, rowID: rowID)
                let arguments: SQLiteArguments = [value] + key.map { $0 as any SQLiteValueConvertible }
                try db.execute("UPDATE \(spec.table) SET \(spec.column) = ? WHERE \(match)", arguments)
                sealed += 1
            }
        }
        return sealed
    }
}
