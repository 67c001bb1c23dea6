import Foundation
import TidingsCore
import TidingsOpenMates

/// `tidings openmates show`: the stored chats in the server's order, offline; in clear when a master key is
/// given.
///
/// The store is opened as the app opens it (a missing table is healed, a damaged file moved aside and
/// rebuilt keeping pending actions): nothing else is written, and nothing decrypted is written anywhere but
/// standard output.
func runOpenMatesShow(_ options: OpenMatesShowOptions) async throws {
    guard FileManager.default.fileExists(atPath: options.store) else {
        throw ToolFailure(ExitCode.noInput, "No store at \(options.store); run 'tidings openmates sync' first.")
    }
    let decryptor = try options.masterKey.map { OpenMatesContentDecryptor(masterKey: try $0.load()) }
    let rows: [OpenMatesShowRow]
    do {
        let store = try await OpenMatesStore.open(path: options.store)
        defer { store.database.close() }
        rows = try await offPool {
            try store.chatList().filter { options.only.isEmpty || options.only.contains($0.chatID) }.map { chat in
                let info = try store.chat(chat.chatID)?.content ?? OpenMatesContentInfo()
                let messages = try store.messages(chatID: chat.chatID)
                let clear = try decryptor.flatMap { try store.decryptedChat(chatID: chat.chatID, decryptor: $0) }
                return OpenMatesShowRow(
                    chat: chat, content: info, messages: Array(messages.suffix(options.limit)), clear: clear,
                    limit: options.limit)
            }
        }
    } catch {
        throw ToolFailure(ExitCode.ioError, "Cannot read the store \(options.store): \(error)")
    }
    if options.json {
        JSONLines.emit(["type": "store", "store": options.store, "chats": rows.count, "decrypted": decryptor != nil])
        for row in rows { row.emitJSON() }
        return
    }
    print("Store \(options.store), \(rows.count) chat(s), read offline (pinned first, then last edited):")
    if decryptor == nil {
        print(
            "Content is end-to-end encrypted: give the master key (--master-key-file <path> or "
                + "\(OpenMatesMasterKeySource.environmentVariable)) to print it in clear.")
    } else {
        let accesses = rows.map(\.accessName)
        let open = accesses.filter { $0 == "visible" || $0 == "hidden-unlocked" }.count
        let locked = accesses.filter { $0 == "hidden-locked" }.count
        print(
            "Decrypted with the master key: \(open) chat(s) open, \(locked) hidden and locked, "
                + "\(accesses.count - open - locked) without a usable key.")
    }
    for row in rows { row.printText() }
}

/// One chat as `show` prints it.
struct OpenMatesShowRow: Sendable {
    var chat: OpenMatesChat
    var content: OpenMatesContentInfo
    /// The newest stored messages, as stored.
    var messages: [OpenMatesMessage]
    /// The chat in clear, when a master key was given.
    var clear: OpenMatesDecryptedChat?
    var limit: Int

    var state: String {
        content.isMetadataOnly
            ? "metadata-only" : content.isComplete(currentMessagesV: chat.versions.messagesV) ? "complete" : "partial"
    }

    var accessName: String {
        guard let clear else { return "encrypted" }
        switch clear.access {
        case .visible: return "visible"
        case .hiddenUnlocked: return "hidden-unlocked"
        case .hiddenLocked: return "hidden-locked"
        case .unavailable: return "unavailable"
        }
    }

    /// The decrypted messages matching ``messages`` (the newest `limit`).
    var clearMessages: [OpenMatesDecryptedMessage] { Array((clear?.messages ?? []).suffix(limit)) }

    func emitJSON() {
        var title: Any = NSNull()
        if case .success(let text)? = clear?.title { title = text }
        JSONLines.emit([
            "type": "chat", "id": chat.chatID, "title": title, "access": accessName, "pinned": chat.pinned,
            "hidden": chat.hidden, "content": state, "messages": content.storedMessageCount,
            "unread": chat.unreadCount,
        ])
        let clearByID = Dictionary(clearMessages.map { ($0.message.messageID, $0.content) }) { first, _ in first }
        for message in messages {
            var object: [String: Any] = [
                "type": "message", "chat": chat.chatID, "id": message.messageID, "role": message.role,
                "createdAt": message.createdAt, "bytes": message.raw["encrypted_content"]?.stringValue?.utf8.count ?? 0,
            ]
            switch clearByID[message.messageID] {
            case .success(let text)?: object["text"] = text
            case .failure(let error)?: object["error"] = error.shortDescription
            case nil: break
            }
            JSONLines.emit(object)
        }
        for embed in clear?.embeds ?? [] {
            var object: [String: Any] = ["type": "embed", "chat": chat.chatID, "id": embed.embedID]
            switch embed.content {
            case .success(let text): object["content"] = text
            case .failure(let error): object["error"] = error.shortDescription
            }
            if case .success(let type)? = embed.type { object["embedType"] = type }
            if case .success(let preview)? = embed.textPreview { object["preview"] = preview }
            JSONLines.emit(object)
        }
    }

    func printText() {
        var flags: [String] = []
        if chat.pinned { flags.append("pinned") }
        if chat.hidden { flags.append("hidden") }
        if chat.isSub { flags.append("sub-chat of \(chat.parentChatID ?? "?")") }
        print("")
        print(
            "\(chat.chatID): \(state), \(content.storedMessageCount) message(s) stored, v\(chat.versions.messagesV)"
                + (flags.isEmpty ? "" : " [\(flags.joined(separator: ", "))]"))
        guard let clear else {
            for message in messages {
                let bytes = message.raw["encrypted_content"]?.stringValue?.utf8.count ?? 0
                print("  \(message.createdAt)  \(message.role): (\(bytes) bytes, encrypted)")
            }
            return
        }
        switch clear.access {
        case .hiddenLocked:
            print("  hidden chat, locked: its key opens only with the hide password's secret; content stays encrypted")
        case .unavailable(let error):
            print("  no usable chat key (\(error.shortDescription)); content stays encrypted")
        case .visible, .hiddenUnlocked:
            break
        }
        if let title = clear.title { print("  title: \(Self.line(title))") }
        for item in clearMessages {
            print("  \(item.message.createdAt)  \(item.message.role): \(Self.line(item.content))")
        }
        for embed in clear.embeds {
            let type = (try? embed.type?.get()).map { " (\($0))" } ?? ""
            let shown = embed.textPreview.flatMap { try? $0.get() }.map { Result.success($0) } ?? embed.content
            print("  embed \(embed.embedID)\(type): \(Self.line(shown))")
        }
    }

    /// Decrypted text made safe for a terminal (no control characters from the server reach it; lines after
    /// the first are indented), or the error's kind.
    static func line(_ result: Result<String, OpenMatesCryptoError>) -> String {
        switch result {
        case .failure(let error): return "(cannot decrypt: \(error.shortDescription))"
        case .success(let text):
            let scalars = text.unicodeScalars.map { scalar -> String in
                if scalar == "\n" { return "\n      " }
                let value = scalar.value
                return value < 0x20 || (0x7F...0x9F).contains(value) ? "\u{FFFD}" : String(scalar)
            }
            return scalars.joined()
        }
    }
}
