import Foundation

extension KecalekClient {
    /// Applies one server notification to the cache and the in-memory receipts, and emits the change.
    ///
    /// - `messages_read` updates receipts in memory only.
    /// - `message_reacted`, `message_pinned`, `message_unpinned` update cached messages in place.
    /// - `message_deleted` removes the messages from the cache at once.
    /// - `new_message` is stored only when the conversation's cache is current on this connection and
    ///   no sync is running for it (otherwise storing it would move `after_ts` past messages not yet
    ///   fetched); else the conversation is refreshed.
    /// - Unknown types are ignored with a log line.
    func apply(_ notification: KecalekNotification) async {
        switch notification {
        case .messagesRead(let conversationID, let userID, let messageIDs, let readAt):
            for id in messageIDs {
                var receipts = readReceipts[conversationID]?[id] ?? []
                receipts.removeAll { $0.userID == userID }
                receipts.append(KecalekReadReceipt(userID: userID, readAt: readAt))
                readReceipts[conversationID, default: [:]][id] = receipts
            }
            emit(.messagesRead(conversationID: conversationID, userID: userID, messageIDs: messageIDs))

        case .messageReacted(let conversationID, let messageID, let change):
            rememberDuringSync(notification, conversationID: conversationID, messageID: messageID)
            do {
                let reactions: [KecalekReaction]? = try cache.write { writer in
                    guard let message = try writer.message(conversationID: conversationID, messageID: messageID) else {
                        return nil
                    }
                    var reactions = message.reactions
                    switch change {
                    case .replace(let list): reactions = list
                    case .add(let reaction): if !reactions.contains(reaction) { reactions.append(reaction) }
                    case .remove(let reaction): reactions.removeAll { $0 == reaction }
                    }
                    _ = try writer.setReactions(reactions, conversationID: conversationID, messageID: messageID)
                    return reactions
                }
                if let reactions {
                    emit(.reactionsChanged(conversationID: conversationID, messageID: messageID, reactions: reactions))
                }
            } catch {
                log.error("could not store reactions: \(error)")
            }

        case .messagePinned(let conversationID, let messageID, let pinned):
            rememberDuringSync(notification, conversationID: conversationID, messageID: messageID)
            do {
                let found = try cache.write { writer in
                    try writer.setPinned(pinned, conversationID: conversationID, messageID: messageID)
                }
                if found { emit(.pinChanged(conversationID: conversationID, messageID: messageID, pinned: pinned)) }
            } catch {
                log.error("could not store pin: \(error)")
            }

        case .messageDeleted(let conversationID, let messageIDs):
            if (syncsInFlight[conversationID] ?? 0) > 0 {
                deletedDuringSync[conversationID, default: []].formUnion(messageIDs)
            }
            do {
                let removed = try cache.write { writer in
                    try writer.delete(conversationID: conversationID, messageIDs: messageIDs)
                }
                forgetReceipts(messageIDs, conversationID: conversationID)
                bufferedNewMessages[conversationID]?.removeAll { messageIDs.contains($0.messageID) }
                if !removed.isEmpty { emit(.messagesDeleted(conversationID: conversationID, messageIDs: removed)) }
            } catch {
                log.error("could not apply deletion: \(error)")
            }

        case .newMessage(let wire):
            await applyNewMessage(wire)

        case .unknown(let type):
            log.notice("ignored unknown notification type '\(type)'")
        }
    }

    private func rememberDuringSync(_ notification: KecalekNotification, conversationID: String, messageID: String) {
        guard (syncsInFlight[conversationID] ?? 0) > 0 else { return }
        changedDuringSync[conversationID, default: [:]][messageID, default: []].append(notification)
    }

    /// `message` with the reaction and pin notifications that arrived during the running sync applied,
    /// in their order.
    func withChangesDuringSync(_ message: KecalekMessage) -> KecalekMessage {
        guard let changes = changedDuringSync[message.conversationID]?[message.messageID] else { return message }
        var patched = message
        for change in changes {
            switch change {
            case .messageReacted(_, _, .replace(let list)): patched.reactions = list
            case .messageReacted(_, _, .add(let reaction)):
                if !patched.reactions.contains(reaction) { patched.reactions.append(reaction) }
            case .messageReacted(_, _, .remove(let reaction)): patched.reactions.removeAll { $0 == reaction }
            case .messagePinned(_, _, let pinned): patched.pinned = pinned
            default: break
            }
        }
        return patched
    }

    private func applyNewMessage(_ wire: KecalekWireMessage) async {
        let conversationID = wire.conversationID
        guard openConversations.contains(conversationID) else {
            log.debug("new message in a conversation that is not open; it will be fetched on open")
            return
        }
        let current = syncedOnGeneration[conversationID] == currentGeneration
        guard current, (syncsInFlight[conversationID] ?? 0) == 0 else {
            // A sync is running (or the cache is not current yet): decide once it has finished.
            bufferedNewMessages[conversationID, default: []].append(wire)
            return
        }
        store([wire], conversationID: conversationID)
    }

    /// Stores messages announced while a sync ran, once the last sync of the conversation ended.
    ///
    /// When the cache is current on this connection, every message created after the sync's fetch was
    /// announced on this same ordered connection, so storing them leaves no hole. Otherwise they are
    /// dropped: the next sync fetches them.
    func flushBufferedMessages(_ conversationID: String) {
        guard let buffered = bufferedNewMessages.removeValue(forKey: conversationID), !buffered.isEmpty else { return }
        guard syncedOnGeneration[conversationID] == currentGeneration else { return }
        store(buffered, conversationID: conversationID)
    }

    private func store(_ wires: [KecalekWireMessage], conversationID: String) {
        // A message older than the sync point was there for the sync that set it: it is cached already, or
        // it was deleted before that sync, possibly before its deletion check's `since`, and storing it now
        // would bring it back for good.
        // Without a sync point no sync has checked deletions yet: the next sync fetches the message.
        guard let point = (try? cache.syncState(conversationID: conversationID))?.point else { return }
        let wires = wires.filter { $0.createdAt >= point }
        guard !wires.isEmpty else { return }
        let opened = decrypt(wires)
        var inserted: [String] = []
        do {
            try cache.write { writer in
                // A message cached already came from a fetch at least as new as this announcement (a burst's
                // `new_message`s are buffered while the sync that fetched them runs): replacing it would undo
                // the reactions and pin the fetch brought, or that notifications applied since. One not cached
                // yet gets the reactions and pins announced after it during the sync (they found it missing).
                for message in opened.messages
                where try writer.message(conversationID: conversationID, messageID: message.messageID) == nil {
                    if try writer.upsert(withChangesDuringSync(message)) { inserted.append(message.messageID) }
                }
            }
        } catch {
            log.error("could not store new messages: \(error)")
            return
        }
        noteReceipts(wires, conversationID: conversationID)
        if !inserted.isEmpty { emit(.messagesStored(conversationID: conversationID, messageIDs: inserted)) }
        for issue in opened.issues { emit(.issue(issue)) }
    }
}
