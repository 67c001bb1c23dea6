import TidingsCore

/// What one prefetch page does to the store, under the same version rules as sync (``OpenMatesSyncRules``),
/// with prefetch's lower authority on top; pure, so every rule is tested without a network.
///
/// Prefetch is additive: it fills the store for offline use and never decides anything sync decides.
/// - A chat tombstoned here (deleted by the server or locally) is never stored again (the rules refuse it).
/// - A hidden chat is skipped: hidden by the row (`is_hidden`) or stored as hidden (a pending hide included);
///   none of its rows, messages or embeds are stored, and it is never un-hidden.
/// - A chat already stored keeps its unread state, chat key, flags (pinned, archived, hidden) and details as
///   sync left them; prefetch only moves its versions forward (an older version never overwrites a newer one)
///   and fills a missing title or key. A chat not stored yet is stored from its row.
/// - Content already stored at an equal or newer version is skipped (a page can repeat a chat phase 1b sent);
///   older content never replaces newer content; content for a chat neither stored nor in the page's rows is
///   ignored, so no chat appears without its metadata.
/// - Embeds, keys and code-run outputs are stored only for chats whose content this page stored.
public enum OpenMatesPrefetchPlanner {
    /// The changes of one page and what was left out.
    public struct Plan: Sendable, Hashable {
        /// Store changes for one transaction.
        public var changes: [OpenMatesStoreChange] = []
        /// Chats skipped because they are hidden.
        public var skippedHidden: [String] = []
        /// Chats skipped because they are deleted (tombstoned).
        public var skippedDeleted: [String] = []
        /// Chats whose stored content was already at the page's version or newer.
        public var alreadyStored: [String] = []
        /// Chats whose content this page stored.
        public var contentStored: [String] = []
    }

    /// The plan of `page` against `view`.
    public static func plan(_ page: OpenMatesPrefetchPage, view: OpenMatesLocalView) -> Plan {
        var plan = Plan()
        var view = view
        var excluded: Set<String> = []
        var rowVersions: [String: Int?] = [:]
        for row in page.chats {
            rowVersions[row.chatID] = row.messagesV
            if view.tombstones.contains(row.chatID) {
                plan.skippedDeleted.append(row.chatID)
                excluded.insert(row.chatID)
                continue
            }
            if isHidden(row.chatID, row: row, view: view) {
                plan.skippedHidden.append(row.chatID)
                excluded.insert(row.chatID)
                continue
            }
            let record = view.chats[row.chatID] == nil ? row : versionsOnly(row, stored: view.chats[row.chatID])
            if let chat = OpenMatesSyncRules.merge(record, into: view.chats[row.chatID], view: view) {
                let changes: [OpenMatesStoreChange] = [.upsertChat(chat)]
                plan.changes += changes
                view.apply(changes)
            }
        }
        for var content in page.content where !excluded.contains(content.chatID) {
            let id = content.chatID
            if content.messagesV == nil { content.messagesV = rowVersions[id] ?? nil }
            if view.tombstones.contains(id) {
                plan.skippedDeleted.append(id)
                excluded.insert(id)
                continue
            }
            guard view.chats[id] != nil || rowVersions.keys.contains(id) else { continue }
            if isHidden(id, row: nil, view: view) {
                plan.skippedHidden.append(id)
                excluded.insert(id)
                continue
            }
            guard content.messages != nil else { continue }
            // Stored at a newer version, or complete at this one: nothing to add (phase 1b already sent it).
            let version = content.messagesV ?? 0
            if let stored = view.content[id],
                (stored.messagesV ?? 0) > version || stored.isComplete(currentMessagesV: version)
            {
                plan.alreadyStored.append(id)
                continue
            }
            let changes = OpenMatesSyncRules.content(content, view: view)
            guard !changes.isEmpty else { continue }
            plan.changes += changes
            view.apply(changes)
            plan.contentStored.append(id)
        }
        // Side data comes with content: a chat whose content is already stored has its embeds already.
        let kept = Set(plan.contentStored)
        let hashes = Set(kept.map(OpenMatesStore.hashedChatID))
        let side = OpenMatesSideData(
            embeds: page.side.embeds.filter { belongs($0, to: hashes) },
            embedKeys: page.side.embedKeys.filter { belongs($0, to: hashes) },
            codeRunOutputs: page.side.codeRunOutputs.filter { output in
                output.omID("chat_id").map { kept.contains($0) } ?? belongs(output, to: hashes)
            })
        if !side.isEmpty { plan.changes.append(.putSide(side)) }
        return plan
    }

    /// Hidden by the row or in the store (where a pending hide has already put it): either keeps the chat out.
    static func isHidden(_ chatID: String, row: OpenMatesChatRecord?, view: OpenMatesLocalView) -> Bool {
        row?.hidden == true || view.chats[chatID]?.hidden == true
    }

    /// What a row may change of a chat sync already stored: its versions (the rules move them forward only),
    /// the title and draft they guard, the list's order, and a chat key only where none is stored.
    static func versionsOnly(_ row: OpenMatesChatRecord, stored: OpenMatesChat?) -> OpenMatesChatRecord {
        OpenMatesChatRecord(
            chatID: row.chatID, messagesV: row.messagesV, titleV: row.titleV, draftV: row.draftV,
            encryptedTitle: row.encryptedTitle, lastEdited: row.lastEdited,
            encryptedChatKey: stored?.encryptedChatKey == nil ? row.encryptedChatKey : nil,
            encryptedDraft: row.encryptedDraft)
    }

    /// Whether an embed or key names one of `hashes` as its chat (one that names none is not stored).
    static func belongs(_ object: [String: JSONValue], to hashes: Set<String>) -> Bool {
        guard let hash = object.omString("hashed_chat_id") else { return false }
        return hashes.contains(hash)
    }
}
