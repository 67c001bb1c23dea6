import TidingsCore

/// The version rules as pure functions: what a server record does to what the store has.
///
/// - The server is authoritative: a component (messages, title, draft) is replaced when the record's version
///   is newer than the stored one; an older or equal version never overwrites it (equal only fills blanks).
/// - Local wins only while an unacknowledged pending action backs it (pinned, hidden and its chat key; messages
///   sent or deleted offline).
/// - A record never clears what it does not carry: absent fields keep their stored values.
/// - Tombstoned chats are never brought back by a record.
public enum OpenMatesSyncRules {
    /// The chat after merging `record` into `local`, or nil when nothing changes (or the chat is tombstoned).
    public static func merge(
        _ record: OpenMatesChatRecord, into local: OpenMatesChat?, view: OpenMatesLocalView
    ) -> OpenMatesChat? {
        guard !view.tombstones.contains(record.chatID) else { return nil }
        var chat = local ?? OpenMatesChat(chatID: record.chatID)
        let isNew = local == nil
        if let titleV = record.titleV, titleV > chat.versions.titleV || isNew {
            chat.versions.titleV = titleV
            if let title = record.encryptedTitle { chat.encryptedTitle = title }
        } else if chat.encryptedTitle == nil, let title = record.encryptedTitle,
            (record.titleV ?? chat.versions.titleV) == chat.versions.titleV
        {
            chat.encryptedTitle = title
        }
        if let messagesV = record.messagesV, messagesV > chat.versions.messagesV {
            chat.versions.messagesV = messagesV
        }
        if let draftV = record.draftV, draftV > chat.versions.draftV {
            chat.versions.draftV = draftV
            if record.encryptedDraft != nil || record.raw.omIsNull("encrypted_draft_md") {
                chat.encryptedDraft = record.encryptedDraft
            }
        }
        if let lastEdited = record.lastEdited { chat.lastEdited = max(chat.lastEdited, lastEdited) }
        if let pinned = record.pinned, !view.backing.pinned.contains(record.chatID) { chat.pinned = pinned }
        if let hidden = record.hidden, !view.backing.hidden.contains(record.chatID) { chat.hidden = hidden }
        if let archived = record.archived { chat.archived = archived }
        if let parent = record.parentChatID { chat.parentChatID = parent }
        if let isSub = record.isSubChat { chat.isSubChat = isSub }
        if let unread = record.unreadCount { chat.unreadCount = max(0, unread) }
        // A pending hide re-wrapped the key locally; the server's old wrapping must not undo that before it answers.
        if let key = record.encryptedChatKey, !view.backing.hidden.contains(record.chatID) {
            chat.encryptedChatKey = key
        }
        for (key, value) in record.raw where !value.isNull || chat.details[key] == nil {
            chat.details[key] = value
        }
        return chat == local ? nil : chat
    }

    /// The changes that store one chat's content, or none when the content is stale, `null` ("keep local")
    /// or for a tombstoned chat.
    ///
    /// Content at a newer messages version replaces the stored messages (keeping those pending sends back);
    /// content at the stored version adds only what is missing (duplicates are ignored); older content is
    /// dropped. A chat not stored yet gets a row first.
    public static func content(_ content: OpenMatesChatContent, view: OpenMatesLocalView) -> [OpenMatesStoreChange] {
        guard !view.tombstones.contains(content.chatID), let incoming = content.messages else { return [] }
        var changes: [OpenMatesStoreChange] = []
        let local = view.chats[content.chatID]
        let version = content.messagesV ?? local?.versions.messagesV ?? 0
        var chat = local ?? OpenMatesChat(chatID: content.chatID)
        if version > chat.versions.messagesV || local == nil {
            chat.versions.messagesV = max(chat.versions.messagesV, version)
            changes.append(.upsertChat(chat))
        }
        let messages = incoming.filter { !view.backing.deletedMessageIDs.contains($0.messageID) }
        let stored = view.content[content.chatID]?.messagesV
        if let stored, version < stored { return changes }
        if let stored, version == stored {
            changes.append(
                .mergeMessages(
                    chatID: content.chatID, messages: messages, messagesV: version,
                    serverMessageCount: content.serverMessageCount, checkpoints: content.compressionCheckpoints))
        } else {
            changes.append(
                .replaceContent(
                    chatID: content.chatID, messages: messages, messagesV: version,
                    serverMessageCount: content.serverMessageCount, checkpoints: content.compressionCheckpoints,
                    keepMessageIDs: view.backing.sentMessageIDs))
        }
        return changes
    }

    /// The changes of a message another device posted: stored when the chat's content is contiguous with it
    /// (or the chat is new with this as its first message); otherwise only the version moves, and the chat
    /// stays partial or metadata-only until it is hydrated.
    public static func newMessage(
        chatID: String, message: OpenMatesWireMessage, messagesV: Int?, lastEdited: Int?, view: OpenMatesLocalView
    ) -> [OpenMatesStoreChange] {
        guard !view.tombstones.contains(chatID) else { return [] }
        let local = view.chats[chatID]
        var chat = local ?? OpenMatesChat(chatID: chatID)
        if let messagesV, messagesV > chat.versions.messagesV { chat.versions.messagesV = messagesV }
        if let lastEdited { chat.lastEdited = max(chat.lastEdited, lastEdited) }
        var changes: [OpenMatesStoreChange] = chat == local ? [] : [.upsertChat(chat)]
        let info = view.content[chatID]
        if local == nil, messagesV ?? 1 <= 1 {
            changes.append(
                .replaceContent(
                    chatID: chatID, messages: [message], messagesV: messagesV ?? 1, serverMessageCount: nil,
                    checkpoints: nil, keepMessageIDs: []))
        } else if let stored = info?.messagesV {
            // Contiguous: the content moves to the new version; a gap: the message is kept but the content
            // stays at its version, so the chat reads as partial until hydrated.
            let contiguous = messagesV.map { $0 == stored + 1 } ?? false
            changes.append(
                .mergeMessages(
                    chatID: chatID, messages: [message], messagesV: contiguous ? messagesV : nil,
                    serverMessageCount: contiguous ? info?.serverMessageCount.map { $0 + 1 } : nil))
        }
        return changes
    }
}
