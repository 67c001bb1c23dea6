import Testing
import TidingsCore

@testable import TidingsMastodon

@Suite(.timeLimit(.minutes(1))) struct TimelinePlannerTests {
    private func status(_ position: Int64, _ id: ServerID) -> MastodonTimelineEntry {
        MastodonTimelineEntry(position: position, content: .status(id))
    }

    private var entries: [MastodonTimelineEntry] {
        [
            status(1, "98"), status(2, "99"), MastodonTimelineEntry(position: 3, content: .gap(.open)),
            status(4, "100"), status(5, "101"),
        ]
    }

    @Test func emptyTimelineIsAColdLoadEitherWay() throws {
        #expect(try MastodonTimelinePlanner.plan(.refresh, entries: [], limit: 40).anchor == .cold)
        #expect(try MastodonTimelinePlanner.plan(.loadOlder, entries: [], limit: 40).anchor == .cold)
    }

    @Test func refreshAnchorsOnTheNewestAndLoadOlderOnTheOldest() throws {
        // One row below the newest, so a page that starts right above it repeats it (the proof of no hole).
        let refresh = try MastodonTimelinePlanner.plan(.refresh, entries: entries, limit: 40)
        #expect(refresh.minID == "100" && refresh.maxID == nil)
        // Not across a gap: then the newest itself.
        let alone = try MastodonTimelinePlanner.plan(.refresh, entries: Array(entries.prefix(4)), limit: 40)
        #expect(alone.minID == "100")
        let older = try MastodonTimelinePlanner.plan(.loadOlder, entries: entries, limit: 40)
        #expect(older.maxID == "98" && older.minID == nil)
    }

    @Test func theEffectiveLimitIsTheSmallerOfLimitAndServerCap() throws {
        #expect(try MastodonTimelinePlanner.plan(.refresh, entries: [], limit: 80, serverCap: 50).limit == 50)
        #expect(try MastodonTimelinePlanner.plan(.refresh, entries: [], limit: 40, serverCap: 50).limit == 40)
        #expect(throws: MastodonTimelineError.invalidLimit) {
            try MastodonTimelinePlanner.plan(.refresh, entries: [], limit: 0)
        }
        #expect(throws: MastodonTimelineError.invalidLimit) {
            try MastodonTimelinePlanner.plan(.refresh, entries: [], limit: 40, serverCap: 0)
        }
    }

    @Test func aGapIsLoadedFromTheNeighbourOnTheChosenSide() throws {
        let fromNewer = try MastodonTimelinePlanner.plan(
            .loadGap(position: 3, side: .newer), entries: entries, limit: 40)
        #expect(fromNewer.maxID == "100" && fromNewer.minID == nil)
        let fromOlder = try MastodonTimelinePlanner.plan(
            .loadGap(position: 3, side: .older), entries: entries, limit: 40)
        #expect(fromOlder.minID == "99" && fromOlder.maxID == nil)
    }

    @Test func gapsThatCannotBeLoadedAreTypedErrors() throws {
        #expect(throws: MastodonTimelineError.gapNotFound) {
            try MastodonTimelinePlanner.plan(.loadGap(position: 2, side: .newer), entries: entries, limit: 40)
        }
        var unfillable = entries
        unfillable[2].content = .gap(.unfillable)
        #expect(throws: MastodonTimelineError.gapUnfillable) {
            try MastodonTimelinePlanner.plan(.loadGap(position: 3, side: .newer), entries: unfillable, limit: 40)
        }
        let bottomGap = [MastodonTimelineEntry(position: 1, content: .gap(.open)), status(2, "5")]
        #expect(throws: MastodonTimelineError.missingAnchor) {
            try MastodonTimelinePlanner.plan(.loadGap(position: 1, side: .older), entries: bottomGap, limit: 40)
        }
    }

    /// The gap on top (newer statuses remain above a full refresh page) is loaded upwards, as a refresh.
    @Test func theGapOnTopIsLoadedAsARefreshFromEitherSide() throws {
        let topGap = [status(1, "4"), status(2, "5"), MastodonTimelineEntry(position: 3, content: .gap(.open))]
        for side in [MastodonGapSide.newer, .older] {
            let plan = try MastodonTimelinePlanner.plan(.loadGap(position: 3, side: side), entries: topGap, limit: 40)
            #expect(plan.anchor == .newer(minID: "4"))
        }
    }
}
