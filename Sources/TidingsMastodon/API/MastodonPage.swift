import Foundation
import TidingsCore
import TidingsNet

/// Where a timeline or notifications request starts and how much it asks for (Mastodon's paging
/// parameters). All bounds are `ServerID`s, compared by length then lexicographically by the server.
public struct MastodonPageRange: Sendable, Hashable {
    /// Only items newer than this, the oldest of them first on the page (used to fill forward without a gap).
    public var minID: ServerID?
    /// Only items older than this (paging back).
    public var maxID: ServerID?
    /// Only items newer than this, the newest first (may leave a gap).
    public var sinceID: ServerID?
    /// How many items to ask for; the server may cap it (Mastodon 40, Nextcloud Social 50).
    public var limit: Int?

    /// A range; all bounds optional.
    public init(minID: ServerID? = nil, maxID: ServerID? = nil, sinceID: ServerID? = nil, limit: Int? = nil) {
        self.minID = minID
        self.maxID = maxID
        self.sinceID = sinceID
        self.limit = limit
    }

    var queryItems: [(String, String)] {
        var items: [(String, String)] = []
        if let maxID { items.append(("max_id", maxID.rawValue)) }
        if let minID { items.append(("min_id", minID.rawValue)) }
        if let sinceID { items.append(("since_id", sinceID.rawValue)) }
        if let limit { items.append(("limit", String(limit))) }
        return items
    }

    /// The paging parameters of a `Link` URL, or nil when it names none.
    static func fromLink(_ url: URL, limit: Int?) -> MastodonPageRange? {
        guard let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems else { return nil }
        func value(_ name: String) -> ServerID? {
            items.first { $0.name == name }?.value.flatMap { $0.isEmpty ? nil : ServerID($0) }
        }
        let range = MastodonPageRange(
            minID: value("min_id"), maxID: value("max_id"), sinceID: value("since_id"), limit: limit)
        return range.minID == nil && range.maxID == nil && range.sinceID == nil ? nil : range
    }
}

/// One page of a list endpoint: its items (malformed ones skipped and counted) and where the `Link`
/// header says the older and newer pages are.
///
/// The end of a list is known only from `Link`: a page shorter than its `limit` may still have more
/// behind it (servers filter after paging), so ``older`` — not the item count — says whether to go on.
public struct MastodonPage<Item: Sendable>: Sendable {
    /// The page's items in the server's order (newest first).
    public var items: [Item]
    /// How many elements of the page did not decode and were skipped.
    public var skipped: Int
    /// `rel="next"`: the range of the older page; nil when the server says there is none.
    public var older: MastodonPageRange?
    /// `rel="prev"`: the range of the newer page.
    public var newer: MastodonPageRange?

    /// A page.
    public init(items: [Item], skipped: Int = 0, older: MastodonPageRange? = nil, newer: MastodonPageRange? = nil) {
        self.items = items
        self.skipped = skipped
        self.older = older
        self.newer = newer
    }

    init(items: [Item], skipped: Int, response: HTTPResponse, limit: Int?) {
        let links = response.links
        self.init(
            items: items, skipped: skipped,
            older: links["next"].flatMap { MastodonPageRange.fromLink($0, limit: limit) },
            newer: links["prev"].flatMap { MastodonPageRange.fromLink($0, limit: limit) })
    }
}
