import Foundation
import TidingsCore
import TidingsKecalek

/// `tidings kecalek show`: reads the cache without changing anything on disk.
///
/// The file is opened read-only (``SQLiteDatabase/Configuration/readOnly``): a missing, damaged, foreign or
/// wrongly keyed file is reported with its sysexits code and left exactly as it is; no `-wal`, `-shm` or
/// `.lock` is created beside a cleanly closed cache.
func runKecalekShow(store: String, key: KecalekCacheKey, only: [String], limit: Int) async throws {
    guard FileManager.default.fileExists(atPath: store) else {
        throw ToolFailure(ExitCode.noInput, "No cache at \(store); run 'tidings kecalek sync' first.")
    }
    let cache: KecalekSQLiteCache
    do {
        cache = try await KecalekSQLiteCache.open(path: store, key: key.key, readOnly: true)
    } catch {
        throw cacheFailure(error, store: store)
    }
    let lines: [String]
    do {
        lines = try await offPool {
            var lines: [String] = []
            let summaries = try cache.conversations().filter { only.isEmpty || only.contains($0.conversationID) }
            for summary in summaries {
                lines.append("")
                lines.append(
                    "\(summary.conversationID): \(summary.messageCount) cached, newest \(summary.newest?.text ?? "-")")
                for message in try cache.newestMessages(conversationID: summary.conversationID, limit: limit) {
                    lines.append("  " + describe(message))
                }
            }
            cache.database.close()
            lines.insert("Cache \(store) (\(key.disclosure)), \(summaries.count) conversation(s), read offline:", at: 0)
            return lines
        }
    } catch {
        throw cacheFailure(error, store: store)
    }
    for moved in movedAsideFiles(beside: store) {
        print("Recovery: an earlier sync moved a damaged cache aside to \(moved).")
    }
    for line in lines { print(line) }
}
