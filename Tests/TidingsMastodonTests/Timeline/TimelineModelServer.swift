import Foundation
import PeerSupport
import TidingsCore

@testable import TidingsMastodon

/// The reference server of the timeline model test: one home feed with Mastodon's paging semantics.
///
/// - `min_id` returns the `limit` rows just newer than the anchor (adjacent), `max_id` the `limit` rows just
///   older, a cold load the newest `limit`.
/// - Only the newest `feedCap` live rows can be paged (Mastodon's home feed keeps ~400).
/// - With filters on, rows the filter hides count against `limit` and are then dropped, so pages come back
///   short while more remain; only the `Link` header (`hasMore`) tells.
/// - Without a `Link` header (`sendsLink == false`) the client must judge fullness by the count.
struct TimelineModelServer {
    var live: [Int] = []  // ascending
    var nextID: Int
    let feedCap: Int
    let filters: Bool
    let sendsLink: Bool

    init(rng: inout SplitMix64, limit: Int) {
        // Start just below a change of length, so IDs of different lengths meet (9 < 10 only by ServerID order).
        nextID = [1, 95, 990, 99_990][Int.random(in: 0..<4, using: &rng)]
        feedCap = Int.random(in: (limit * 2)...(limit * 6), using: &rng)
        sendsLink = Int.random(in: 0..<4, using: &rng) != 0
        filters = sendsLink && Bool.random(using: &rng)
    }

    /// Whether the client's filter hides `id` (the server never returns it).
    func hidden(_ id: Int) -> Bool { filters && id % 5 == 0 }

    /// Every live status the client can ever see.
    var visible: [Int] { live.filter { !hidden($0) } }

    mutating func post(_ count: Int, rng: inout SplitMix64) {
        for _ in 0..<count {
            live.append(nextID)
            nextID += Int.random(in: 1...7, using: &rng)
        }
    }

    var feed: ArraySlice<Int> { live.suffix(feedCap) }

    /// The page for `plan`: the rows shown (newest first), whether more remain (`nil` without `Link`), and
    /// the `Link` cursors — the newest and oldest rows paged over, filtered or not (`nil` without `Link`).
    func answer(_ plan: MastodonTimelineFetchPlan) -> (ids: [Int], hasMore: Bool?, newest: Int?, oldest: Int?) {
        let feed = self.feed
        let rows: ArraySlice<Int>
        let more: Bool
        if let min = plan.minID.flatMap({ Int($0.rawValue) }) {
            let newer = feed.filter { $0 > min }
            rows = newer.prefix(plan.limit)
            more = newer.count > rows.count
        } else if let max = plan.maxID.flatMap({ Int($0.rawValue) }) {
            let older = feed.filter { $0 < max }
            rows = older.suffix(plan.limit)
            more = older.count > rows.count
        } else {
            rows = feed.suffix(plan.limit)
            more = feed.count > rows.count
        }
        return (
            rows.filter { !hidden($0) }.reversed(), sendsLink ? more : nil, sendsLink ? rows.last : nil,
            sendsLink ? rows.first : nil
        )
    }
}
