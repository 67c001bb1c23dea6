import Foundation
import TidingsCore

extension MastodonTimelineStore {
    /// The cached statuses of `account` whose stored bytes mention `id` (opened), for finding every copy of a
    /// status: its own row and the boosts of it.
    ///
    /// Why a scan: payloads are opaque (and may be sealed), so no column says which status a boost wraps; the
    /// byte search keeps decoding to the few rows that can be copies. A cache holds at most a few thousand
    /// statuses (see the retention limits), and this runs once per action.
    func statusPayloads(account: String, mentioning id: ServerID, in db: SQLiteConnection) throws -> [(
        id: ServerID, payload: Data
    )] {
        let needle = Data("\"\(id.rawValue)\"".utf8)
        let rows: [(String, SealedValue)] = try db.fetchAll(
            "SELECT status_id, payload FROM \(MastodonTimelineSchema.statuses) WHERE account = ?", [account]
        ) { row in (try row[0], try row[1]) }
        var found: [(id: ServerID, payload: Data)] = []
        for (rawID, sealed) in rows {
            let rowID = ServerID(rawID)
            let payload = try openPayload(sealed, account: account, id: rowID)
            if rowID == id || payload.range(of: needle) != nil { found.append((rowID, payload)) }
        }
        return found
    }
}
