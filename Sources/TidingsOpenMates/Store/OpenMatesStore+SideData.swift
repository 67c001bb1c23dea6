import TidingsCore

/// Keeps embeds, embed keys and code-run outputs bounded by the chats stored: a chat that leaves the store
/// (evicted from the window or deleted by the server) takes its side data with it, so neither the file nor the
/// `client_embed_ids` of every `phased_sync_request` grows with chats the device no longer keeps.
extension OpenMatesStore {
    /// The chat a code-run output belongs to: its `chat_id`, or the stored chat its `hashed_chat_id` names; nil
    /// when it names none (such an output is kept until the store is reset: nothing tells whose it is).
    static func outputChatID(_ output: [String: JSONValue], _ db: SQLiteConnection) throws -> String? {
        if let chatID = output.omString("chat_id") { return chatID }
        guard let hash = output.omString("hashed_chat_id") else { return nil }
        return try db.fetchOne(String.self, "SELECT chat_id FROM om_chats WHERE hashed_id = ?", [hash])
    }

    /// Removes the embeds, embed keys and code-run outputs of chats not stored (run in ``apply(_:)``'s
    /// transaction, after eviction). Side data that names no chat stays; a `master` embed key (it names no
    /// chat) goes with the embed it opens.
    static func removeSideDataOfUnstoredChats(_ db: SQLiteConnection) throws {
        let orphanedEmbeds = try db.fetchAll(
            String.self,
            """
            SELECT embed_id FROM om_embeds
            WHERE hashed_chat_id IS NOT NULL AND hashed_chat_id NOT IN (SELECT hashed_id FROM om_chats)
            """)
        if !orphanedEmbeds.isEmpty {
            // Keys name their embed by the hex SHA-256 of its ID, the same hash chats are named by.
            let hashes = orphanedEmbeds.map { JSONValue.string(hashedChatID($0)) }
            try db.execute(
                """
                DELETE FROM om_embed_keys WHERE hashed_chat_id IS NULL
                AND hashed_embed_id IN (SELECT value FROM json_each(?))
                """, [JSONValue.array(hashes).jsonString()])
            try db.execute(
                "DELETE FROM om_embeds WHERE embed_id IN (SELECT value FROM json_each(?))",
                [JSONValue.array(orphanedEmbeds.map(JSONValue.string)).jsonString()])
        }
        try db.execute(
            """
            DELETE FROM om_embed_keys
            WHERE hashed_chat_id IS NOT NULL AND hashed_chat_id NOT IN (SELECT hashed_id FROM om_chats)
            """)
        try db.execute(
            """
            DELETE FROM om_code_run_outputs
            WHERE chat_id IS NOT NULL AND chat_id NOT IN (SELECT chat_id FROM om_chats)
            """)
    }

    /// Links the code-run outputs stored before they had a chat column (schema 3 adds it empty) to their chats,
    /// reading each body (sealed or not) once; outputs that name no stored chat stay unlinked.
    ///
    /// - Returns: How many outputs were linked.
    static func linkCodeRunOutputs(_ db: SQLiteConnection, _ sealing: OpenMatesStoreSealing) throws -> Int {
        let unlinked = try db.fetchAll("SELECT output_id, body FROM om_code_run_outputs WHERE chat_id IS NULL") {
            row -> (String, SQLiteValue) in (try row[0], try row[1])
        }
        var linked = 0
        for (id, body) in unlinked {
            guard let text = try? sealing.open(body, "om_code_run_outputs", "body", rowID: id),
                let output = (try? JSONValue(parsing: text))?.objectValue,
                let chatID = try outputChatID(output, db)
            else { continue }
            try db.execute("UPDATE om_code_run_outputs SET chat_id = ? WHERE output_id = ?", [chatID, id])
            linked += 1
        }
        return linked
    }
}
