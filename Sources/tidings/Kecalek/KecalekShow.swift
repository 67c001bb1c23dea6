import Foundation
import TidingsCore
import TidingsKecalek

/// `tidings kecalek show`: reads the cache without changing anything on disk.
///
/// The file is opened read-only (``SQLiteDatabase/Configuration/readOnly``): a missing, damaged, foreign or
/// wrongly keyed file is reported with its sysexits code and left exactly as it is; no `-wal`, `-shm` or
/// `.lock` is created beside a cleanly closed cache.
func runKecalekShow(_ options: KecalekShowOptions) async throws {
    let store = options.store
    guard FileManager.default.fileExists(atPath: store) else {
        throw ToolFailure(ExitCode.noInput, "No cache at \(store); run 'tidings kecalek sync' first.")
    }
    let cache: KecalekSQLiteCache
    do {
        cache = try await KecalekSQLiteCache.open(path: store, key: options.key.key, readOnly: true)
    } catch {
        throw cacheFailure(error, store: store)
    }
    let shown: [(summary: KecalekCachedConversation, messages: [KecalekMessage])]
    do {
        shown = try await offPool {
            defer { cache.database.close() }
            return try cache.conversations().filter { options.only.isEmpty || options.only.contains($0.conversationID) }
                .map { ($0, try cache.newestMessages(conversationID: $0.conversationID, limit: options.limit)) }
        }
    } catch {
        throw cacheFailure(error, store: store)
    }
    for moved in movedAsideFiles(beside: store) {
        let line = "Recovery: an earlier sync moved a damaged cache aside to \(moved)."
        if options.json { JSONLines.emit(["type": "recovery", "message": line]) } else { print(line) }
    }
    if options.json {
        JSONLines.emit(["type": "cache", "store": store, "key": options.key.jsonName, "conversations": shown.count])
    } else {
        print("Cache \(store) (\(options.key.disclosure)), \(shown.count) conversation(s), read offline:")
    }
    for (summary, messages) in shown {
        if options.json {
            JSONLines.emit([
                "type": "conversation", "conversation": summary.conversationID, "cached": summary.messageCount,
                "newest": summary.newest.map { $0.text as Any } ?? NSNull(),
            ])
            for message in messages { JSONLines.emit(jsonObject(message)) }
            continue
        }
        print("")
        print("\(summary.conversationID): \(summary.messageCount) cached, newest \(summary.newest?.text ?? "-")")
        for message in messages { print("  " + describe(message)) }
    }
}

/// A message as `show --json` prints it.
private func jsonObject(_ message: KecalekMessage) -> [String: Any] {
    [
        "type": "message", "conversation": message.conversationID, "id": message.messageID,
        "createdAt": message.createdAt.text, "sender": message.senderID,
        "text": message.text.map { $0 as Any } ?? NSNull(), "pinned": message.pinned,
        "reactions": message.reactions.map(\.emoji),
    ]
}
