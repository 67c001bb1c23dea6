import Foundation
import TidingsCore
import TidingsOpenMates

extension OpenMatesSandboxServer {
    /// The action events of the reference server (commit 1f6bb71; the seeds' README, "OpenMates actions"), with
    /// its answers: what the acting connection gets, what the user's other connections get.
    ///
    /// - `delete_message` {chatId, messageId} (camelCase; snake_case alone is refused with `error`): idempotent;
    ///   every connection gets `message_deleted` {chat_id, message_id}; an unknown message still succeeds.
    /// - `update_chat` {chat_id, pinned}: idempotent; the acting connection gets nothing, the others
    ///   `chat_pinned_updated` {chat_id, pinned}.
    /// - `encrypted_chat_metadata`: with `message_id` and `encrypted_content`, stores a user message (idempotent by
    ///   `message_id`; never starts the AI) and answers `chat_message_confirmed` {status: "synced"}, then
    ///   `encrypted_metadata_stored`; an `encrypted_chat_key` other than the chat's is refused with
    ///   `chat_key_mismatch` unless `allow_chat_key_rotation` is true, in which case the key is replaced (the chat
    ///   is hidden exactly when its new key does not open with ``masterKey``); the other connections get
    ///   `encrypted_chat_metadata` {chat_id, versions, encrypted_chat_key} when a chat field was sent.
    ///   `message_id` without `encrypted_content` answers `incomplete_chat_metadata`.
    /// - `chat_message_added` {chat_id, message: {message_id, content, …}}: NOT idempotent, as on the real server:
    ///   each receipt bumps `messages_v` and starts an AI task (listed in ``aiRequests``); the acting connection
    ///   gets `chat_message_confirmed` then `ai_task_initiated`, the others `new_chat_message`. Under
    ///   ``OpenMatesSandboxVariant/aiCacheLacksHistory`` one without `message_history` gets only
    ///   `request_chat_history` {chat_id, reason}.
    ///
    /// An event on a chat the user does not have (but `update_chat`, broadcast as the reference server does), or a type in ``OpenMatesSandboxVariant/refusedActions``, is
    /// refused with `error` {message, chat_id}, as the handlers word it; nothing is applied.
    func action(_ session: Int, type: String, payload: [String: JSONValue]) {
        let camelCase = type == "delete_message"
        let chatID = payload[camelCase ? "chatId" : "chat_id"]?.identifierValue
        func refuse(_ message: String) {
            emit(session, "error", ["message": .string(message), "chat_id": chatID.map(JSONValue.string) ?? .null])
        }
        if variant.refusedActions.contains(type) { return refuse("\(type) refused") }
        guard let chatID else { return refuse(camelCase ? "Missing chatId or messageId" : "Missing chat_id") }
        guard let chat = chats[chatID] else {
            // The reference server broadcasts a pin of a chat it does not have, and refuses nothing.
            if type == "update_chat", let pinned = payload["pinned"]?.boolValue {
                for target in others(of: session) {
                    emit(target, "chat_pinned_updated", ["chat_id": .string(chatID), "pinned": .bool(pinned)])
                }
                return
            }
            return refuse("no such chat")
        }
        switch type {
        case "delete_message": deleteMessage(session, chat, payload: payload, refuse: refuse)
        case "update_chat": updateChat(session, chat, payload: payload, refuse: refuse)
        case "encrypted_chat_metadata": encryptedChatMetadata(session, chat, payload: payload)
        default: chatMessageAdded(session, chat, payload: payload, refuse: refuse)
        }
    }

    private func others(of session: Int) -> [Int] { sessions.keys.sorted().filter { $0 != session } }

    /// Every connection, or all but the acting one under ``OpenMatesSandboxVariant/unansweredActions``.
    private func answered(_ session: Int, _ type: String) -> [Int] {
        variant.unansweredActions.contains(type) ? others(of: session) : sessions.keys.sorted()
    }

    private func deleteMessage(
        _ session: Int, _ stored: OpenMatesSandboxChat, payload: [String: JSONValue], refuse: (String) -> Void
    ) {
        guard let messageID = payload["messageId"]?.identifierValue else {
            return refuse("Missing chatId or messageId")
        }
        var chat = stored
        let before = chat.messages.count
        chat.messages.removeAll { $0["message_id"]?.identifierValue == messageID }
        if chat.messages.count != before {
            chat.messagesV += 1
            appliedActions.append("delete_message:\(chat.chatID):\(messageID)")
        }
        chats[chat.chatID] = chat
        for target in answered(session, "delete_message") {
            emit(
                target, "message_deleted",
                [
                    "chat_id": .string(chat.chatID), "message_id": .string(messageID),
                    "versions": ["messages_v": .int(Int64(chat.messagesV))],
                ])
        }
    }

    private func updateChat(
        _ session: Int, _ stored: OpenMatesSandboxChat, payload: [String: JSONValue], refuse: (String) -> Void
    ) {
        guard let pinned = payload["pinned"]?.boolValue else { return refuse("Missing pinned") }
        var chat = stored
        if chat.pinned != pinned {
            chat.pinned = pinned
            appliedActions.append("update_chat:\(chat.chatID):\(pinned)")
        }
        chats[chat.chatID] = chat
        for target in others(of: session) {
            emit(target, "chat_pinned_updated", ["chat_id": .string(chat.chatID), "pinned": .bool(pinned)])
        }
    }

    private func encryptedChatMetadata(_ session: Int, _ stored: OpenMatesSandboxChat, payload: [String: JSONValue]) {
        var chat = stored
        let messageID = payload["message_id"]?.identifierValue
        let reply: (String, [String: JSONValue]) -> Void = { type, body in
            if !self.variant.unansweredActions.contains("encrypted_chat_metadata") { self.emit(session, type, body) }
        }
        let named: [String: JSONValue] = [
            "chat_id": .string(chat.chatID), "message_id": messageID.map(JSONValue.string) ?? .null,
        ]
        let key = payload["encrypted_chat_key"]?.stringValue
        if let key, let current = chat.encryptedChatKey, key != current,
            payload["allow_chat_key_rotation"]?.boolValue != true
        {
            var body = named
            body["code"] = "chat_key_mismatch"
            body["message"] = "Chat encryption key mismatch. Reload the chat key and retry."
            return reply("chat_key_mismatch", body)
        }
        if messageID != nil, payload["encrypted_content"]?.stringValue == nil {
            var body = named
            body["message"] = "Message metadata is incomplete"
            return reply("incomplete_chat_metadata", body)
        }
        if let key, key != chat.encryptedChatKey {
            chat.encryptedChatKey = key
            let hidden = (try? OpenMatesChatKeyWrap.unwrap(key, masterKey: masterKey)) == nil
            if hidden != chat.hidden {
                chat.hidden = hidden
                appliedActions.append("\(hidden ? "hide" : "unhide"):\(chat.chatID)")
            }
        }
        if let messageID, let content = payload["encrypted_content"]?.stringValue,
            !chat.messages.contains(where: { $0["message_id"]?.identifierValue == messageID })
        {
            let created = payload["created_at"]?.intValue ?? now
            // The server's clock never runs behind a message it stored, so later posts sort after it.
            now = max(now, created) + 1
            chat.messages.append([
                "message_id": .string(messageID), "chat_id": .string(chat.chatID), "role": "user",
                "created_at": .int(Int64(created)), "encrypted_content": .string(content),
            ])
            chat.messagesV += 1
            chat.lastEdited = now
            appliedActions.append("store_message:\(chat.chatID):\(messageID)")
        }
        chats[chat.chatID] = chat
        if messageID != nil {
            reply("chat_message_confirmed", named.merging(["status": "synced"]) { $1 })
        }
        reply("encrypted_metadata_stored", named.merging(["status": "queued_for_storage"]) { $1 })
        guard let key else { return }
        for target in others(of: session) {
            emit(
                target, "encrypted_chat_metadata",
                [
                    "chat_id": .string(chat.chatID), "encrypted_chat_key": .string(key),
                    "versions": [
                        "messages_v": .int(Int64(chat.messagesV)),
                        "last_edited_overall_timestamp": .int(Int64(chat.lastEdited)),
                    ],
                ])
        }
    }

    private func chatMessageAdded(
        _ session: Int, _ stored: OpenMatesSandboxChat, payload: [String: JSONValue], refuse: (String) -> Void
    ) {
        guard let message = payload["message"]?.objectValue, let messageID = message["message_id"]?.identifierValue
        else { return refuse("Missing message") }
        guard message["encrypted_content"] == nil else { return refuse("encrypted_content is not accepted here") }
        if variant.aiCacheLacksHistory, payload["message_history"] == nil {
            emit(session, "request_chat_history", ["chat_id": .string(stored.chatID), "reason": "cache_miss"])
            return
        }
        var chat = stored
        chat.messagesV += 1
        now += 1
        chat.lastEdited = now
        chats[chat.chatID] = chat
        aiRequests.append("\(chat.chatID):\(messageID)")
        let confirmed: [String: JSONValue] = [
            "chat_id": .string(chat.chatID), "message_id": .string(messageID), "temp_id": .string(messageID),
            "new_messages_v": .int(Int64(chat.messagesV)), "new_last_edited_overall_timestamp": .int(Int64(now)),
        ]
        for target in answered(session, "chat_message_added") where target == session {
            emit(target, "chat_message_confirmed", confirmed)
            emit(
                target, "ai_task_initiated",
                [
                    "chat_id": .string(chat.chatID), "user_message_id": .string(messageID),
                    "ai_task_id": .string("task-\(aiRequests.count)"), "status": "processing",
                ])
        }
        let stored = chat.messages.first { $0["message_id"]?.identifierValue == messageID }
        for target in others(of: session) {
            emit(
                target, "new_chat_message",
                [
                    "chat_id": .string(chat.chatID),
                    "message": .object(stored ?? ["message_id": .string(messageID), "role": "user"]),
                    "versions": ["messages_v": .int(Int64(chat.messagesV))],
                    "last_edited_overall_timestamp": .int(Int64(now)),
                ])
        }
    }
}
