import TidingsCore

/// Chooses the anchored fetch for a request from a snapshot of the timeline; pure, so it is tested without a
/// store or a server.
public enum MastodonTimelinePlanner {
    /// The plan for `request` on a timeline whose entries are `entries` (ascending positions).
    ///
    /// - Parameters:
    ///   - request: What to load: a refresh, older entries, or a gap from one side.
    ///   - entries: The timeline's entries in ascending positions.
    ///   - limit: The `limit` the app asks for (Mastodon: 40 for home and notifications).
    ///   - serverCap: The most the server returns per page (from its instance info; Nextcloud Social: 50).
    /// - Throws: ``MastodonTimelineError/invalidLimit`` when either is below 1;
    ///   ``MastodonTimelineError/gapNotFound`` when no gap is at the position;
    ///   ``MastodonTimelineError/gapUnfillable`` for a gap marked so;
    ///   ``MastodonTimelineError/missingAnchor`` when the gap has no cached status on `side`.
    ///
    /// A refresh anchors `min_id` one status below the newest cached (when no gap lies between them), so a page
    /// that starts right above the cache shows the newest again. Loading the gap on top of the timeline (left
    /// by a full refresh page: newer statuses remain) from either side is a refresh.
    public static func plan(
        _ request: MastodonTimelineRequest, entries: [MastodonTimelineEntry], limit: Int, serverCap: Int? = nil
    ) throws -> MastodonTimelineFetchPlan {
        guard limit >= 1, (serverCap ?? 1) >= 1 else {
            throw MastodonTimelineError(
                .invalidLimit, detail: "limit \(limit), cap \(serverCap.map(String.init) ?? "none")")
        }
        let effective = min(limit, serverCap ?? limit)
        switch request {
        case .refresh:
            guard let newestIndex = entries.lastIndex(where: { !$0.isGap }), let newest = entries[newestIndex].statusID
            else {
                return MastodonTimelineFetchPlan(anchor: .cold, limit: effective)
            }
            // `min_id` answers the rows just above it, so anchoring one row below the newest makes the page show
            // the newest again when it starts right above it: the proof that nothing between them was skipped
            // (a capped feed answers a fallen-out anchor with its oldest rows). Not across a gap.
            if newestIndex > 0, let below = entries[newestIndex - 1].statusID {
                return MastodonTimelineFetchPlan(anchor: .newer(minID: below), limit: effective)
            }
            return MastodonTimelineFetchPlan(anchor: .newer(minID: newest), limit: effective)
        case .loadOlder:
            guard let oldest = entries.first(where: { !$0.isGap })?.statusID else {
                return MastodonTimelineFetchPlan(anchor: .cold, limit: effective)
            }
            return MastodonTimelineFetchPlan(anchor: .older(maxID: oldest), limit: effective)
        case .loadGap(let position, let side):
            guard let index = entries.firstIndex(where: { $0.position == position }),
                case .gap(let state) = entries[index].content
            else {
                throw MastodonTimelineError(.gapNotFound, detail: "position \(position)")
            }
            guard state == .open else { throw MastodonTimelineError(.gapUnfillable, detail: "position \(position)") }
            // The gap on top (newer statuses remain above a full refresh page) is loaded upwards, as a refresh.
            if isTopGap(position, in: entries) {
                return try plan(.refresh, entries: entries, limit: limit, serverCap: serverCap)
            }
            let neighbour: ServerID?
            switch side {
            case .newer: neighbour = entries[(index + 1)...].first(where: { !$0.isGap })?.statusID
            case .older: neighbour = entries[..<index].last(where: { !$0.isGap })?.statusID
            }
            guard let neighbour else {
                throw MastodonTimelineError(.missingAnchor, detail: "position \(position) has no \(side) neighbour")
            }
            return MastodonTimelineFetchPlan(
                anchor: .gap(position: position, side: side, anchorID: neighbour), limit: effective)
        }
    }

    /// Whether the entry at `position` is an open gap above every cached status: newer statuses remain there.
    public static func isTopGap(_ position: Int64, in entries: [MastodonTimelineEntry]) -> Bool {
        guard let last = entries.last, last.position == position, last.content == .gap(.open) else { return false }
        return entries.contains { !$0.isGap }
    }
}
