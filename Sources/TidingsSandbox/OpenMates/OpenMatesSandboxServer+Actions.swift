import TidingsCore
import TidingsOpenMates

extension OpenMatesSandboxServer {
    /// One live action from a session: applied idempotently, echoed to every connection (the acting one
    /// included, unless the variant drops that answer), or refused with an `error` naming `client_action_id`
    /// (or only the chat, as the public server does, under ``OpenMatesSandboxVariant/refusalsNameTheChatOnly``).
    func action(_ session: Int, type: String, payload: [String: JSONValue]) {
        let actionID = payload["client_action_id"] ?? .null
        func refuse(_ message: String) {
            let named: (key: String, value: JSONValue) =
                variant.refusalsNameTheChatOnly
                ? ("chat_id", payload["chat_id"] ?? .null) : ("client_action_id", actionID)
            emit(session, "error", ["message": .string(message), named.key: named.value])
        }
        if variant.refusedActions.contains(type) { return refuse("\(type) refused") }
        let camelCase = type == "delete_message" && variant.deleteMessageReadsCamelCase
        guard let chatID = payload[camelCase ? "chatId" : "chat_id"]?.identifierValue, var chat = chats[chatID] else {
            return refuse("no such chat")
        }
        var echo: (type: String, payload: [String: JSONValue])
        switch type {
        case "send_message":
            guard var message = payload["message"]?.objectValue, let messageID = message["message_id"]?.identifierValue
            else { return refuse("no message") }
            if !chat.messages.contains(where: { $0["message_id"]?.identifierValue == messageID }) {
                // The server's clock never runs behind a message it stored, so later posts sort after it.
                now = max(now, message["created_at"]?.intValue ?? now) + 1
                message["chat_id"] = .string(chatID)
                chat.messages.append(message)
                chat.messagesV += 1
                chat.lastEdited = now
                appliedActions.append("\(type):\(chatID):\(messageID)")
            }
            echo = (
                "new_chat_message",
                [
                    "chat_id": .string(chatID),
                    "message": .object(
                        chat.messages.first { $0["message_id"]?.identifierValue == messageID } ?? message),
                    "versions": ["messages_v": .int(Int64(chat.messagesV))],
                    "last_edited_overall_timestamp": .int(Int64(chat.lastEdited)),
                ]
            )
        case "delete_message":
            guard let messageID = payload[camelCase ? "messageId" : "message_id"]?.identifierValue else {
                return refuse("no message_id")
            }
            let before = chat.messages.count
            chat.messages.removeAll { $0["message_id"]?.identifierValue == messageID }
            if chat.messages.count != before {
                chat.messagesV += 1
                appliedActions.append("\(type):\(chatID):\(messageID)")
            }
            echo = (
                "message_deleted",
                [
                    "chat_id": .string(chatID), "message_id": .string(messageID),
                    "versions": ["messages_v": .int(Int64(chat.messagesV))],
                ]
            )
        default:
            let key = ["pin_chat": "pinned", "archive_chat": "is_archived"][type] ?? "is_hidden"
            guard let value = payload[key]?.boolValue else { return refuse("no \(key)") }
            let old = type == "pin_chat" ? chat.pinned : type == "archive_chat" ? chat.archived : chat.hidden
            if old != value {
                switch type {
                case "pin_chat": chat.pinned = value
                case "archive_chat": chat.archived = value
                default: chat.hidden = value
                }
                appliedActions.append("\(type):\(chatID)")
            }
            echo =
                type == "pin_chat"
                ? ("chat_pinned_updated", ["chat_id": .string(chatID), "pinned": .bool(value)])
                : ("chat_update", chat.details)
        }
        chats[chatID] = chat
        let dropped = variant.unansweredActions.contains(type)
        for target in sessions.keys.sorted() where !(dropped && target == session) {
            emit(target, echo.type, echo.payload)
        }
    }
}
