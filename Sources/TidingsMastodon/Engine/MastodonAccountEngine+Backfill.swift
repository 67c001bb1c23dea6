import Foundation
import TidingsCore

/// Catching a timeline up after an outage (the user stream's reconnect): every page up to the top, then the
/// gaps those pages left below them, so nothing posted while the socket was down waits for the safety net.
extension MastodonAccountEngine {
    /// How many pages one ``backfill(_:maximumPages:beforePage:)`` reads at most: a home feed holds about 400
    /// statuses (Mastodon's cap), 10 pages of 40, so this covers any outage the server can still fill with room
    /// for filtered pages.
    public static let backfillPages = 25

    /// Catches `timeline` up from the newest cached status: refreshes (each page `min_id` above the newest
    /// cached) until a page brings nothing new and says no newer statuses remain — the open gap on top is then
    /// closed — and then loads, from their newer side, the open gaps those pages left below them (a page that
    /// could not be shown to start right above the cache: a capped feed skipped what fell out of it) until each
    /// closes or the server's feed cap marks it unfillable. Gaps that were open before are left to the reader.
    ///
    /// Every page after the first waits for `beforePage` (the account's rate gate: the server's reserve, a
    /// `Retry-After`); false ends the backfill there. A rate limit after the first page ends it too. When the
    /// bound or an end leaves newer statuses on the server, ``hasTimelineBacklog(_:)`` is set, so polling keeps
    /// catching up on the table's interval.
    ///
    /// - Returns: How many pages were read.
    /// - Throws: ``MastodonError`` of the first page, or a store error.
    @discardableResult
    public func backfill(
        _ timeline: String = MastodonTimelineKey.homeTimeline, maximumPages: Int = backfillPages,
        beforePage: @Sendable () async -> Bool = { true }
    ) async throws -> Int {
        let gapsBefore = Set(try openGapFloors(timeline))
        let upward = try await refreshUpward(timeline, maximumPages: maximumPages, beforePage: beforePage)
        var pages = upward.pages
        if upward.newerRemain { return pages }
        // The gaps this backfill made, each named by the status below it (positions move as pages land).
        for floor in try openGapFloors(timeline) where !gapsBefore.contains(floor) {
            while let position = try openGap(above: floor, in: timeline), pages < maximumPages, await beforePage() {
                pages += 1
                // A failing load leaves the gap open for the reader (or the next backfill); what was stored stays.
                guard (try? await loadGap(timeline, position: position, side: .newer)) != nil else { return pages }
            }
        }
        return pages
    }

    /// Refreshes `timeline` page after page (each page after the first once `beforePage` allows it; false ends
    /// it) until a page brings nothing new and does not say newer statuses remain (a full page leaves the open
    /// gap on top; a `Link` cursor moved past rows the server did not show), up to `maximumPages`; what is still
    /// left sets ``hasTimelineBacklog(_:)``, which is cleared once the top is reached. A rate limit on a page
    /// after the first ends it with what was stored.
    ///
    /// - Returns: The pages read, and whether newer statuses remain.
    /// - Throws: ``MastodonError`` of the first page, or any other failure (what earlier pages stored stays, and
    ///   the backlog is set).
    @discardableResult
    func refreshUpward(
        _ timeline: String, maximumPages: Int, beforePage: @Sendable () async -> Bool = { true }
    ) async throws -> (pages: Int, newerRemain: Bool) {
        var pages = 0
        var newerRemain = true
        while newerRemain, pages < maximumPages, pages == 0 ? true : await beforePage() {
            do {
                let result = try await refresh(timeline)
                newerRemain = result.newerRemain || result.cursorMoved || result.inserted > 0
            } catch let error as MastodonError where error == .rateLimited && pages > 0 {
                break
            } catch {
                if pages > 0 { timelineBacklog.insert(timeline) }
                throw error
            }
            pages += 1
        }
        if newerRemain { timelineBacklog.insert(timeline) } else { timelineBacklog.remove(timeline) }
        return (pages, newerRemain)
    }

    /// The status right below each open gap of `timeline` that is not the gap on top.
    private func openGapFloors(_ timeline: String) throws -> [ServerID] {
        let entries = try entries(timeline)
        var floors: [ServerID] = []
        var below: ServerID?
        for (index, entry) in entries.enumerated() {
            if let id = entry.statusID {
                below = id
            } else if entry.content == .gap(.open), index < entries.count - 1, let below {
                floors.append(below)
            }
        }
        return floors
    }

    /// The position of the open gap right above status `floor`, if one is still there.
    private func openGap(above floor: ServerID, in timeline: String) throws -> Int64? {
        let entries = try entries(timeline)
        guard let index = entries.firstIndex(where: { $0.statusID == floor }), index + 1 < entries.count - 1,
            entries[index + 1].content == .gap(.open)
        else { return nil }
        return entries[index + 1].position
    }
}
