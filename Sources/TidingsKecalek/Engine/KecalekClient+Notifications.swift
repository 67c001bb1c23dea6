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
            do {
                let found = try cache.write { writer in
                    try writer.setPinned(pinned, conversationID: conversationID, messageID: messageID)
                }
                if found { emit(.pinChanged(conversationID: conversationID, messageID: messageID, pinned: pinned)) }
            } catch {
                log.error("could not store pin: \(error)")
            }

        case .messageDeleted(let conversationID, let messageIDs):
            do {
                let removed = try cache.write { writer in
                    try writer.delete(conversationID: conversationID, messageIDs: messageIDs)
                }
                forgetReceipts(messageIDs, conversationID: conversationID)
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

    private func applyNewMessage(_ wire: KecalekWireMessage) async {
        let conversationID = wire.conversationID
        guard openConversations.contains(conversationID) else { return }
        let current = syncedOnGeneration[conversationID] == currentGeneration
            && (syncsInFlight[conversationID] ?? 0) == 0
        guard current else {
            Task { _ = await self.messages(conversation: conversationID) }
            return
        }
        do {
            let message = try open(wire)
            let inserted = try cache.write { writer in try writer.upsert(message) }
            noteReceipts([wire], conversationID: conversationID)
            if inserted { emit(.messagesStored(conversationID: conversationID, messageIDs: [wire.messageID])) }
        } catch {
            let issue = KecalekMessageIssue(
                messageID: wire.messageID, conversationID: conversationID, error: asKecalek(error))
            log.warning("skipped message: \(issue)")
            emit(.issue(issue))
        }
    }
}
