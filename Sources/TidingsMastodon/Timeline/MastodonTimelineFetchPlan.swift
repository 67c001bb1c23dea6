import Foundation
import TidingsCore

/// Which side of a gap to load from.
public enum MastodonGapSide: Sendable, Equatable {
    /// From the gap's newer neighbour downwards, with `max_id` = that neighbour.
    case newer
    /// From the gap's older neighbour upwards, with `min_id` = that neighbour.
    case older
}

/// What the app wants fetched for a timeline.
public enum MastodonTimelineRequest: Sendable, Equatable {
    /// What is newer than the newest cached entry (a cold load when nothing is cached).
    case refresh
    /// What is older than the oldest cached entry (a cold load when nothing is cached).
    case loadOlder
    /// The next page into the gap at `position`.
    case loadGap(position: Int64, side: MastodonGapSide)
}

/// One anchored fetch: the query to send and what the applier needs to place its page.
///
/// Every plan is anchored on a cached status or is a cold load, so a page never lands where the store cannot
/// tell whether something is missing.
public struct MastodonTimelineFetchPlan: Sendable, Equatable {
    /// Where the page goes.
    public enum Anchor: Sendable, Equatable {
        /// Nothing cached: the newest page.
        case cold
        /// `min_id` = the status right below the newest cached one (so the page repeats the newest when it
        /// starts right above it), the newest itself when a gap or nothing lies below it, or a refresh cursor.
        case newer(minID: ServerID)
        /// `max_id` = the oldest cached status.
        case older(maxID: ServerID)
        /// Into the gap at `position`, from `side`, anchored on that side's neighbour `anchorID`.
        case gap(position: Int64, side: MastodonGapSide, anchorID: ServerID)
    }

    /// Where the page goes.
    public var anchor: Anchor
    /// The effective limit: min(the app's limit, the server's cap). A page of this many is "full".
    public var limit: Int

    /// The `min_id` query parameter, when the plan has one.
    public var minID: ServerID? {
        switch anchor {
        case .newer(let id): return id
        case .gap(_, .older, let id): return id
        default: return nil
        }
    }

    /// The `max_id` query parameter, when the plan has one.
    public var maxID: ServerID? {
        switch anchor {
        case .older(let id): return id
        case .gap(_, .newer, let id): return id
        default: return nil
        }
    }
}

/// A page the server returned for a plan, in any order.
public struct MastodonTimelinePage: Sendable {
    /// One status of the page: its ID and the payload to store (e.g. its JSON).
    public struct Item: Sendable {
        /// The status's server ID.
        public var id: ServerID
        /// The opaque bytes to store.
        public var payload: Data
        /// The status this one boosts, when it is a boost: a boost of a status deleted on this device is
        /// skipped like the deleted status itself (on Mastodon a boost goes with the status it boosts).
        public var boosted: ServerID?

        /// An item for status `id`, a boost of `boosted` when given.
        public init(id: ServerID, payload: Data, boosted: ServerID? = nil) {
            self.id = id
            self.payload = payload
            self.boosted = boosted
        }
    }

    /// The statuses, in any order; duplicates are ignored.
    public var items: [Item]
    /// What the `Link` header said: `true` when it has a link onwards (`next` for `max_id` pages, `prev`
    /// for `min_id` pages), `false` when it has none, `nil` when the server sent no `Link` header. When
    /// known it wins over the count, since servers return short pages while more remain (filters).
    public var hasMore: Bool?
    /// For a refresh (`min_id`) page: the newest ID the server paged over (the `Link` header's `prev`
    /// `min_id`), which may be newer than every item shown when server-side filters dropped the newest
    /// ones. The store keeps it, so the next refresh starts above it instead of asking for the same
    /// filtered rows again.
    public var newerCursor: ServerID?
    /// For a cold or `max_id` page: the oldest ID the server paged over (the `Link` header's `next` `max_id`),
    /// which may be older than every item shown; loading older starts below it.
    public var olderCursor: ServerID?

    /// A page of `items`.
    public init(
        items: [Item], hasMore: Bool? = nil, newerCursor: ServerID? = nil, olderCursor: ServerID? = nil
    ) {
        self.items = items
        self.hasMore = hasMore
        self.newerCursor = newerCursor
        self.olderCursor = olderCursor
    }

    /// Whether the page says more remains beyond it for a plan of `limit`.
    public func isFull(limit: Int) -> Bool { hasMore ?? (items.count >= limit) }
}

/// What applying one page did.
public struct MastodonTimelineApplyResult: Sendable, Equatable {
    /// How many entries the page added.
    public var inserted = 0
    /// How many already-cached statuses it refreshed in place.
    public var updated = 0
    /// A gap was inserted: above a full `min_id` page (newer statuses remain), or between a full page and the
    /// cached entries when the page was not shown to start right above them.
    public var gapInserted = false
    /// A refresh page was full: newer statuses remain above it, behind the open gap on top of the timeline
    /// (loading that gap, or refreshing again, fetches them).
    public var newerRemain = false
    /// The loaded gap closed and was removed.
    public var gapClosed = false
    /// The loaded gap was marked unfillable.
    public var gapUnfillable = false
    /// An older page reached the end of what the server has.
    public var reachedEnd = false
    /// A refresh page's `Link` cursor moved past rows the server did not show (filtered): newer statuses
    /// may remain, so another refresh is worth it even when nothing was inserted.
    public var cursorMoved = false

    /// A result with nothing done.
    public init() {}
}
