import Foundation

/// The steps syncs share: decoding, decrypting, `mark_read`, the cache answer, receipts.
extension KecalekClient {
    func decodeWire(_ raw: [KecalekJSON], conversationID: String) -> (
        messages: [KecalekWireMessage], issues: [KecalekMessageIssue]
    ) {
        var messages: [KecalekWireMessage] = []
        var issues: [KecalekMessageIssue] = []
        for element in raw {
            if let wire = decodeWire(element, conversationID: conversationID, issues: &issues) {
                messages.append(wire)
            } else if let record = issues.last {
                log.warning("skipped message: \(record)")
            }
        }
        return (messages, issues)
    }

    /// Decodes one message of a page of `conversationID`; a malformed one, or one that belongs to another
    /// conversation, is recorded in `issues` and gives nil.
    func decodeWire(_ element: KecalekJSON, conversationID: String, issues: inout [KecalekMessageIssue])
        -> KecalekWireMessage?
    {
        let wire: KecalekWireMessage
        do {
            wire = try KecalekWireMessage(json: element, conversationID: conversationID)
        } catch {
            issues.append(issue(for: element, conversationID: conversationID, error: error))
            return nil
        }
        guard wire.conversationID == conversationID else {
            issues.append(
                KecalekMessageIssue(
                    messageID: wire.messageID, conversationID: conversationID,
                    error: KecalekError(.malformedMessage, detail: "belongs to another conversation")))
            return nil
        }
        return wire
    }

    func decrypt(_ wire: [KecalekWireMessage]) -> (messages: [KecalekMessage], issues: [KecalekMessageIssue]) {
        var messages: [KecalekMessage] = []
        var issues: [KecalekMessageIssue] = []
        for message in wire {
            do {
                messages.append(try open(message))
            } catch {
                let record = KecalekMessageIssue(
                    messageID: message.messageID, conversationID: message.conversationID, error: asKecalek(error))
                log.warning("skipped message: \(record)")
                issues.append(record)
            }
        }
        return (messages, issues)
    }

    func open(_ wire: KecalekWireMessage) throws -> KecalekMessage {
        let payload = try decryptor.decrypt(
            wire.encryptedPayload, conversationID: wire.conversationID, messageID: wire.messageID)
        guard (try? KecalekJSON.parse(payload))?.objectValue != nil else {
            throw KecalekError(.decryption, operation: wire.messageID, detail: "payload is not a JSON object")
        }
        return KecalekMessage(
            messageID: wire.messageID, conversationID: wire.conversationID, senderID: wire.senderID,
            createdAt: wire.createdAt, payload: payload, reactions: wire.reactions, pinned: wire.pinned)
    }

    func issue(for element: KecalekJSON, conversationID: String, error: any Error) -> KecalekMessageIssue {
        KecalekMessageIssue(
            messageID: element["message_id"]?.identifierValue, conversationID: conversationID, error: asKecalek(error))
    }

    func asKecalek(_ error: any Error) -> KecalekError {
        if let error = error as? KecalekError { return error }
        return KecalekError(.decryption, detail: "\(type(of: error))")
    }

    /// Sends `mark_read` for the messages others sent that the user has not read; nothing when none.
    func markRead(_ wire: [KecalekWireMessage], conversationID: String, traffic: inout KecalekTraffic) async
        -> [String]
    {
        let me = configuration.userID
        let unread = KecalekClient.unreadMessageIDs(wire, me: me)
        guard !unread.isEmpty else { return [] }
        let (outcome, record) = await request(
            "mark_read",
            ["conversation_id": .string(conversationID), "message_ids": .array(unread.map(KecalekJSON.string))],
            items: { _ in unread.count })
        traffic.requests.append(record)
        guard case .success = outcome else {
            log.warning("mark_read failed: \(record.failure.map { "\($0)" } ?? "?")")
            return []
        }
        for id in unread {
            var receipts = readReceipts[conversationID]?[id] ?? []
            if !receipts.contains(where: { $0.userID == me }) {
                receipts.append(KecalekReadReceipt(userID: me, readAt: nil))
                readReceipts[conversationID, default: [:]][id] = receipts
            }
        }
        return unread
    }

    /// The IDs `mark_read` must carry: messages others sent whose `read_by` lacks `me`, in page order.
    public static func unreadMessageIDs(_ messages: [KecalekWireMessage], me: String) -> [String] {
        messages.filter { message in
            message.senderID != me && !message.readBy.contains { $0.userID == me }
        }.map(\.messageID)
    }

    func cachePage(_ conversationID: String, limit: Int, error: KecalekError, traffic: KecalekTraffic)
        -> KecalekMessagePage
    {
        log.notice("answering \(conversationID) from the cache: \(error)")
        var messages: [KecalekMessage] = []
        do {
            messages = try cache.newestMessages(conversationID: conversationID, limit: limit)
        } catch {
            log.error("cache read failed: \(error)")
        }
        return KecalekMessagePage(
            conversationID: conversationID, messages: withReceipts(messages),
            source: messages.isEmpty ? .unavailable(error) : .cache(error), totalCount: nil, newMessageIDs: [],
            deletedMessageIDs: [], markedRead: [], issues: [], traffic: traffic)
    }

    func noteReceipts(_ wire: [KecalekWireMessage], conversationID: String) {
        for message in wire {
            readReceipts[conversationID, default: [:]][message.messageID] = message.readBy
        }
    }

    func forgetReceipts(_ ids: [String], conversationID: String) {
        for id in ids { readReceipts[conversationID]?[id] = nil }
    }

    func withReceipts(_ messages: [KecalekMessage]) -> [KecalekMessage] {
        messages.map { message in
            var copy = message
            copy.readBy = readReceipts[message.conversationID]?[message.messageID] ?? []
            return copy
        }
    }
}
