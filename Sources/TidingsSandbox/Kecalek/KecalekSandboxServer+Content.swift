import Foundation
import TidingsCore
import TidingsKecalek

extension KecalekSandboxServer {
    /// Posts a message as `senderID` and notifies connected members with `new_message`.
    ///
    /// - Parameters:
    ///   - conversationID: An existing conversation.
    ///   - senderID: Who the message is from; not checked against the members.
    ///   - text: The message text; the payload is `{"text": …}`.
    ///   - control: Sends `{"_control": text}` instead, which clients keep out of message lists.
    /// - Returns: The wire message as stored.
    /// - Throws: `KecalekError.missingKey` for an unknown conversation.
    @discardableResult
    public func post(conversation conversationID: String, from senderID: String, text: String, control: Bool = false)
        throws -> KecalekWireMessage
    {
        let payload: JSONValue = control ? ["_control": .string(text)] : ["text": .string(text)]
        let sealed = try cipher.seal(payload.jsonData(sortedKeys: true), conversationID: conversationID)
        guard conversations[conversationID] != nil else {
            throw KecalekError.missingKey
        }
        nextMessageNumber += 1
        wallClock += 1000
        let createdAt = stamp()
        let message = KecalekWireMessage(
            messageID: String(format: "msg-%06d", nextMessageNumber), conversationID: conversationID,
            senderID: senderID, createdAt: createdAt, encryptedPayload: sealed)
        conversations[conversationID]?.messages.append(StoredMessage(wire: message))
        notify(conversationID, .newMessage(message))
        return message
    }

    /// Posts `count` messages without notifying anyone (fixtures and benchmarks).
    public func seed(conversation conversationID: String, from senders: [String], count: Int, textLength: Int = 120)
        throws
    {
        guard conversations[conversationID] != nil, !senders.isEmpty else { throw KecalekError.missingKey }
        for index in 0..<count {
            let payload: JSONValue = ["text": .string(Self.sampleText(index, length: textLength))]
            let sealed = try cipher.seal(payload.jsonData(sortedKeys: true), conversationID: conversationID)
            nextMessageNumber += 1
            wallClock += 1000
            let createdAt = stamp()
            conversations[conversationID]?.messages.append(
                StoredMessage(
                    wire: KecalekWireMessage(
                        messageID: String(format: "msg-%06d", nextMessageNumber), conversationID: conversationID,
                        senderID: senders[index % senders.count], createdAt: createdAt,
                        encryptedPayload: sealed)))
        }
    }

    /// Adds a message whose wire form is `raw` exactly (a malformed or tampered message), placed at the
    /// current wall time.
    public func insertRaw(conversation conversationID: String, messageID: String, raw: JSONValue) {
        wallClock += 1000
        let placeholder = KecalekWireMessage(
            messageID: messageID, conversationID: conversationID, senderID: "?", createdAt: stamp(),
            encryptedPayload: Data())
        conversations[conversationID]?.messages.append(StoredMessage(wire: placeholder, rawOverride: raw))
    }

    /// Deletes a message, keeps a tombstone for `get_deleted_since`, and notifies with `message_deleted`.
    public func delete(conversation conversationID: String, messageID: String) {
        guard var conversation = conversations[conversationID] else { return }
        let before = conversation.messages.count
        conversation.messages.removeAll { $0.wire.messageID == messageID }
        guard conversation.messages.count < before else { return }
        wallClock += 1000
        conversation.tombstones.append((messageID, stamp()))
        conversations[conversationID] = conversation
        notify(conversationID, .messageDeleted(conversationID: conversationID, messageIDs: [messageID]))
    }

    /// Adds a reaction and notifies with `message_reacted` carrying the full list.
    public func react(conversation conversationID: String, messageID: String, userID: String, emoji: String) {
        guard let index = index(of: messageID, in: conversationID) else { return }
        let reaction = KecalekReaction(userID: userID, emoji: emoji)
        guard conversations[conversationID]?.messages[index].wire.reactions.contains(reaction) == false else { return }
        conversations[conversationID]?.messages[index].wire.reactions.append(reaction)
        let reactions = conversations[conversationID]?.messages[index].wire.reactions ?? []
        notify(
            conversationID,
            .messageReacted(conversationID: conversationID, messageID: messageID, change: .replace(reactions)))
    }

    /// Pins or unpins a message and notifies with `message_pinned` / `message_unpinned`.
    public func pin(conversation conversationID: String, messageID: String, pinned: Bool) {
        guard let index = index(of: messageID, in: conversationID) else { return }
        conversations[conversationID]?.messages[index].wire.pinned = pinned
        notify(conversationID, .messagePinned(conversationID: conversationID, messageID: messageID, pinned: pinned))
    }

    /// Sends `frame` as is to every connection of `userID` (unknown or malformed notifications).
    public func sendRaw(_ frame: Data, to userID: String) {
        for session in sessions.values where session.userID == userID { deliver(frame, to: session) }
    }

    /// The stored wire message, if it exists.
    public func message(conversation conversationID: String, messageID: String) -> KecalekWireMessage? {
        index(of: messageID, in: conversationID).flatMap { conversations[conversationID]?.messages[$0].wire }
    }

    /// The IDs of a conversation's messages in the server's order (oldest first), control messages included.
    public func messageIDs(conversation conversationID: String) -> [String] {
        conversations[conversationID]?.messages.map(\.wire.messageID) ?? []
    }

    /// How many messages a conversation holds.
    public func messageCount(conversation conversationID: String) -> Int {
        conversations[conversationID]?.messages.count ?? 0
    }

    func members(of conversationID: String) -> [String]? { conversations[conversationID]?.members }

    func conversation(_ conversationID: String) -> Conversation? { conversations[conversationID] }

    /// Marks messages read by `userID` as another of their devices would (no request involved), notifying
    /// members like `mark_read`.
    public func markReadElsewhere(conversation conversationID: String, messageIDs: [String], by userID: String) {
        let before = redundantReadMarks.count
        _ = markRead(conversationID, ids: messageIDs, by: userID)
        redundantReadMarks.removeSubrange(before...)
    }

    /// Adds `userID` to `read_by` of the given messages and notifies members; returns how many changed.
    func markRead(_ conversationID: String, ids: [String], by userID: String) -> Int {
        let readAt = stamp()
        var changed: [String] = []
        for id in ids {
            if let index = index(of: id, in: conversationID),
                let wire = conversations[conversationID]?.messages[index].wire,
                wire.senderID == userID || wire.readBy.contains(where: { $0.userID == userID })
            {
                redundantReadMarks.append(id)
            }
            guard let index = index(of: id, in: conversationID),
                conversations[conversationID]?.messages[index].wire.readBy.contains(where: { $0.userID == userID })
                    == false
            else { continue }
            conversations[conversationID]?.messages[index].wire.readBy.append(
                KecalekReadReceipt(userID: userID, readAt: readAt))
            changed.append(id)
        }
        if !changed.isEmpty {
            notify(
                conversationID,
                .messagesRead(conversationID: conversationID, userID: userID, messageIDs: changed, readAt: readAt))
        }
        return changed.count
    }

    func index(of messageID: String, in conversationID: String) -> Int? {
        conversations[conversationID]?.messages.firstIndex { $0.wire.messageID == messageID }
    }

    /// Phrases the seeded messages are made of.
    static let samplePhrases = [
        "Ahoj, jak se máš?", "Dneska to nestihnu, promiň.", "Kdo má podklady k poradě?", "Posílám fotky z výletu.",
        "V pátek jdeme na pivo?", "Díky, to pomohlo!", "Můžeš mi zavolat?", "Schůzka se přesouvá na zítra.",
    ]

    /// Message `index` of a seeded conversation: `#index` and phrases, about `length` characters.
    public static func sampleText(_ index: Int, length: Int) -> String {
        var text = "#\(index)"
        var phrase = index
        while text.count < length {
            text += " " + samplePhrases[phrase % samplePhrases.count]
            phrase += 1
        }
        return String(text.prefix(max(length, 1)))
    }
}
