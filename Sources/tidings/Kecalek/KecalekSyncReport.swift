import Foundation
import TidingsKecalek

/// What `tidings kecalek sync` prints as it goes: the human text, or with `--json` one object per line whose
/// keys the command's help lists. Neither form ever holds a token or a key.
///
/// Used by one sync from one task only.
final class KecalekSyncReport {
    private let json: Bool
    /// The `start` object, completed by ``cache(store:key:)`` and only then printed.
    private var start: [String: Any] = [:]

    init(json: Bool) { self.json = json }

    /// Whom the sync talks to, as who.
    func start(_ line: String, target: String, user: String) {
        guard json else { return print(line) }
        start = ["type": "start", "target": target, "user": user]
    }

    /// Which cache file, and how private its key is.
    func cache(store: String, key: KecalekCacheKey) {
        guard json else { return print("Cache: \(store) (\(key.disclosure))\n") }
        start["store"] = store
        start["key"] = key.jsonName
        JSONLines.emit(start)
    }

    /// What opening the cache did to a damaged or old file.
    func recovery(_ line: String) {
        guard json else { return print(line) }
        JSONLines.emit(["type": "recovery", "message": line])
    }

    /// One conversation's page: its source, counts, requests and bytes.
    func page(_ page: KecalekMessagePage, synced: Bool) {
        guard json else {
            print(
                "\(page.conversationID): \(describe(page.source)) — \(page.messages.count) shown, "
                    + "\(page.newMessageIDs.count) new, \(page.deletedMessageIDs.count) deleted, "
                    + "\(page.markedRead.count) marked read")
            for request in page.traffic.requests { print("  \(request)") }
            for issue in page.issues { print("  skipped: \(issue)") }
            print("  wire: ↑\(page.traffic.bytesSent) B ↓\(page.traffic.bytesReceived) B")
            return
        }
        let source =
            switch page.source {
            case .incremental: "incremental"
            case .full: "full"
            case .cache: "cache"
            case .unavailable: "unavailable"
            }
        JSONLines.emit([
            "type": "conversation", "conversation": page.conversationID, "source": source, "synced": synced,
            "shown": page.messages.count, "new": page.newMessageIDs.count, "deleted": page.deletedMessageIDs.count,
            "markedRead": page.markedRead.count, "skipped": page.issues.count,
            "bytesSent": page.traffic.bytesSent, "bytesReceived": page.traffic.bytesReceived, "gap": page.gapRemains,
        ])
    }

    /// The bytes of the whole sync.
    func total(sent: Int, received: Int) {
        guard json else {
            print("\nWire total: ↑\(sent) B ↓\(received) B (JSON text, without WebSocket framing)")
            print("Store:")
            return
        }
        JSONLines.emit(["type": "total", "bytesSent": sent, "bytesReceived": received])
    }

    /// One conversation as the cache holds it after the sync.
    func store(_ summary: KecalekCachedConversation, added: Int) {
        guard json else {
            return print(
                "  \(summary.conversationID): \(summary.messageCount) messages (\(added >= 0 ? "+" : "")\(added)), "
                    + "newest \(summary.newest?.text ?? "-")")
        }
        JSONLines.emit([
            "type": "store", "conversation": summary.conversationID, "messages": summary.messageCount,
            "added": added, "newest": summary.newest.map { $0.text as Any } ?? NSNull(),
        ])
    }
}
