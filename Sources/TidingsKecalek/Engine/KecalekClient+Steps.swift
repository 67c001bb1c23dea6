import Foundation
import TidingsCore

/// The steps syncs share: decoding, decrypting, `mark_read`, the cache answer, receipts.
extension KecalekClient {
    func decodeWire(_ raw: [JSONValue], conversationID: String) -> (
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
    func decodeWire(_ element: JSONValue, conversationID: String, issues: inout [KecalekMessageIssue])
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
        guard (try? JSONValue(kecalekFrame: payload))?.objectValue != nil else {
            throw KecalekError(.decryption, operation: wire.messageID, detail: "payload is not a JSON object")
        }
        return KecalekMessage(
            messageID: wire.messageID, conversationID: wire.conversationID, senderID: wire.senderID,
            createdAt: wire.createdAt, payload: payload, reactions: wire.reactions, pinned: wire.pinned)
    }

    func issue(for element: JSONValue, conversationID: String, error: any Error) -> KecalekMessageIssue {
        KecalekMessageIssue(
            messageID: element["message_id"]?.identifierValue, conversationID: conversationID, error: asKecalek(error))
    }

    func asKecalek(_ error: any Error) -> KecalekError {
        if let error = error as? KecalekError { return error }
        return KecalekError(.decryption, detail: "\(type(of: error))")
    }

    /// Sends `mark_read` for the messages others sent that the user has not read, together with the ones
    /// whose earlier `mark_read` the server did not accept; nothing when none.
    ///
    /// The IDs go to the cache's durable pending set before the request and leave it when the server
    /// accepts them, so a failed or interrupted `mark_read` is sent again by a later sync, even after a
    /// relaunch. Pending IDs that are no longer cached, or that the user is known to have read since, are
    /// dropped instead of being sent.
    func markRead(_ wire: [KecalekWireMessage], conversationID: String, traffic: inout KecalekTraffic) async
        -> [String]
    {
        let me = configuration.userID
        let fresh = KecalekClient.unreadMessageIDs(wire, me: me)
        let fetched = Dictionary(wire.map { ($0.messageID, $0) }, uniquingKeysWith: { _, last in last })
        var unread = fresh
        var dropped: [String] = []
        do {
            for id in try cache.pendingReads(conversationID: conversationID) where !unread.contains(id) {
                let readSince =
                    fetched[id].map { $0.readBy.contains { $0.userID == me } }
                    ?? (readReceipts[conversationID]?[id]?.contains { $0.userID == me } ?? false)
                let cached = try cache.message(conversationID: conversationID, messageID: id)
                if readSince || cached == nil {
                    dropped.append(id)
                } else {
                    unread.append(id)
                }
            }
            try cache.write { writer in
                try writer.removePendingReads(dropped, conversationID: conversationID)
                try writer.addPendingReads(fresh, conversationID: conversationID)
            }
        } catch {
            log.error("pending mark_read set unavailable: \(error)")
        }
        guard !unread.isEmpty else { return [] }
        let (outcome, record) = await request(
            "mark_read",
            ["conversation_id": .string(conversationID), "message_ids": .array(unread.map(JSONValue.string))],
            items: { _ in unread.count })
        traffic.requests.append(record)
        guard case .success = outcome else {
            log.warning("mark_read failed, will retry: \(record.failure.map { "\($0)" } ?? "?")")
            return []
        }
        do {
            try cache.write { try $0.removePendingReads(unread, conversationID: conversationID) }
        } catch {
            log.error("could not clear pending mark_read: \(error)")
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
