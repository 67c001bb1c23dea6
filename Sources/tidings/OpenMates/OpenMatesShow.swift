import Foundation
import TidingsCore
import TidingsOpenMates

/// `tidings openmates show`: the stored chats in the server's order, offline.
///
/// The store is opened as the app opens it (a missing table is healed, a damaged file moved aside and
/// rebuilt keeping pending actions): nothing else is written.
func runOpenMatesShow(_ options: OpenMatesShowOptions) async throws {
    guard FileManager.default.fileExists(atPath: options.store) else {
        throw ToolFailure(ExitCode.noInput, "No store at \(options.store); run 'tidings openmates sync' first.")
    }
    let rows: [(chat: OpenMatesChat, content: OpenMatesContentInfo, messages: [OpenMatesMessage])]
    do {
        let store = try await OpenMatesStore.open(path: options.store)
        defer { store.database.close() }
        rows = try await offPool {
            try store.chatList().filter { options.only.isEmpty || options.only.contains($0.chatID) }.map { chat in
                let info = try store.chat(chat.chatID)?.content ?? OpenMatesContentInfo()
                let messages = try store.messages(chatID: chat.chatID)
                return (chat, info, Array(messages.suffix(options.limit)))
            }
        }
    } catch {
        throw ToolFailure(ExitCode.ioError, "Cannot read the store \(options.store): \(error)")
    }
    if options.json {
        JSONLines.emit(["type": "store", "store": options.store, "chats": rows.count])
    } else {
        print("Store \(options.store), \(rows.count) chat(s), read offline (pinned first, then last edited):")
    }
    for row in rows {
        let state =
            row.content.isMetadataOnly
            ? "metadata-only"
            : row.content.isComplete(currentMessagesV: row.chat.versions.messagesV) ? "complete" : "partial"
        if options.json {
            JSONLines.emit([
                "type": "chat", "id": row.chat.chatID, "title": row.chat.encryptedTitle as Any? ?? NSNull(),
                "pinned": row.chat.pinned, "hidden": row.chat.hidden, "content": state,
                "messages": row.content.storedMessageCount, "unread": row.chat.unreadCount,
            ])
            for message in row.messages {
                JSONLines.emit([
                    "type": "message", "chat": row.chat.chatID, "id": message.messageID, "role": message.role,
                    "createdAt": message.createdAt,
                    "bytes": message.raw["encrypted_content"]?.stringValue?.utf8.count ?? 0,
                ])
            }
            continue
        }
        var flags: [String] = []
        if row.chat.pinned { flags.append("pinned") }
        if row.chat.hidden { flags.append("hidden") }
        if row.chat.isSub { flags.append("sub-chat of \(row.chat.parentChatID ?? "?")") }
        print("")
        print(
            "\(row.chat.chatID): \(state), \(row.content.storedMessageCount) message(s) stored, v\(row.chat.versions.messagesV)"
                + (flags.isEmpty ? "" : " [\(flags.joined(separator: ", "))]"))
        for message in row.messages {
            let bytes = message.raw["encrypted_content"]?.stringValue?.utf8.count ?? 0
            print("  \(message.createdAt)  \(message.role): (\(bytes) bytes, encrypted)")
        }
    }
}
