import Foundation
import TidingsCore
import TidingsMastodon

/// `tidings mastodon show`: the stored home timeline, newest first (an edited status marked so), read offline from a read-only open (nothing
/// on disk changes); a gap prints as a gap, never as a continuous timeline.
func runMastodonShow(_ options: MastodonShowOptions) async throws {
    let path = options.store
    guard FileManager.default.fileExists(atPath: path) else {
        throw ToolFailure(ExitCode.noInput, "No store at \(path); run 'tidings mastodon sync' first.")
    }
    let database: SQLiteDatabase
    do {
        database = try await SQLiteDatabase.open(
            path: path, schema: MastodonTimelineSchema.schema,
            configuration: .init(checksIntegrityOnOpen: false, readOnly: true))
    } catch {
        throw ToolFailure(ExitCode.dataError, "\(path) is not a readable timeline store (\(error)); left as it is.")
    }
    defer { database.close() }
    let store = MastodonTimelineStore(database: database)
    let key = MastodonTimelineKey(account: options.account, timeline: MastodonTimelineKey.homeTimeline)
    let rows: [MastodonShownRow]
    let totals: (statuses: Int, gaps: Int)
    do {
        let entries = try await store.entries(key)
        totals = (entries.filter { !$0.isGap }.count, entries.filter(\.isGap).count)
        var shown: [MastodonShownRow] = []
        for entry in entries.reversed().prefix(options.limit) {
            switch entry.content {
            case .gap(let state): shown.append(.gap(state))
            case .status(let id):
                let stored = try await store.status(account: options.account, id: id)
                shown.append(
                    .status(
                        id, try stored.map { try MastodonStatusPayload.decode($0.payload) },
                        edited: stored?.edited ?? false))
            }
        }
        rows = shown
    } catch {
        throw ToolFailure(ExitCode.dataError, "\(path): the stored timeline does not read (\(error)).")
    }
    if options.json {
        JSONLines.emit([
            "type": "store", "store": path, "account": options.account, "statuses": totals.statuses,
            "gaps": totals.gaps,
        ])
    } else {
        print(
            "Store \(path), account \(options.account): \(totals.statuses) statuses, \(totals.gaps) gap(s), read offline:"
        )
    }
    for row in rows { row.emit(json: options.json) }
}

/// One printed row of `show`.
private enum MastodonShownRow: Sendable {
    case status(ServerID, MastodonStatus?, edited: Bool)
    case gap(MastodonGapState)

    func emit(json: Bool) {
        switch self {
        case .gap(let state):
            let name = state == .open ? "open" : "unfillable"
            if json {
                JSONLines.emit(["type": "gap", "state": name])
            } else {
                print(state == .open ? "  ┄┄ gap: not fetched yet ┄┄" : "  ┄┄ gap: the server no longer has these ┄┄")
            }
        case .status(let id, let status, let edited):
            let text = status.map { plainText($0.content) } ?? "(not readable)"
            let author = status?.account?.acct
            let date = status?.createdAt.map { ISO8601DateFormatter().string(from: $0) }
            if json {
                JSONLines.emit([
                    "type": "status", "id": id.description, "createdAt": date.map { $0 as Any } ?? NSNull(),
                    "account": author.map { $0 as Any } ?? NSNull(), "text": text, "edited": edited,
                ])
            } else {
                print("  \(id)  \(date ?? "-")  \(author ?? "?"): \(text)\(edited ? " (edited)" : "")")
            }
        }
    }
}

/// A status's HTML as one line of text: tags dropped, the common entities decoded.
private func plainText(_ html: String) -> String {
    var text = html.replacingOccurrences(of: "<br>", with: " ").replacingOccurrences(of: "</p><p>", with: " ")
    text = text.replacingOccurrences(of: "<[^>]*>", with: "", options: .regularExpression)
    for (entity, character) in [("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&#39;", "'"), ("&amp;", "&")] {
        text = text.replacingOccurrences(of: entity, with: character)
    }
    return text
}
