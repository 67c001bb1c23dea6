import Foundation
import Testing
import TidingsCore

@testable import TidingsMastodon

/// A sweep pass deletes at most ``MastodonRetention/maxRowsPerPass`` rows, gap entries included, and the
/// defaults are the data model's: home 500, other timelines 200, notifications 500.
@Suite(.timeLimit(.minutes(1))) struct TimelineSweepBudgetTests {
    typealias S = TimelineTestSupport

    @Test func aGapAtTheTrimLineCountsAgainstTheBudget() async throws {
        let store = try S.store()
        // 1…2000, a gap, then a full page 3001…3600 (a gap on top too): the trim of 2000 rows stops right below
        // the gap, which must not be left at the bottom.
        try await S.load(store, .refresh, ids: Array(1...2000), limit: 5000)
        try await S.load(store, .refresh, ids: Array(3001...3600), limit: 600)
        let before = try await store.entries(S.home)
        #expect(before.count == 2602 && before[2000].isGap && before.last?.isGap == true)
        // One notification over the limit, so the pass has a row to spend its last unit of budget on.
        try await store.storeNotifications(
            (1...501).map { .init(id: ServerID(String($0)), payload: Data()) }, account: S.home.account)

        var report = try await store.sweep()
        #expect(report.total == 2000, "\(report)")
        #expect(report.moreRemains)
        var entries = try await store.entries(S.home)
        #expect(entries.first?.isGap == false, "never a gap at the bottom")
        #expect(before.count - entries.count == report.entries)
        #expect(report.notifications == 1)

        report = try await store.sweep()
        #expect(report.total <= 2000 && !report.moreRemains, "\(report)")
        entries = try await store.entries(S.home)
        #expect(entries.count <= 500 && entries.first?.isGap == false)
        #expect(entries.first?.statusID.map { $0 >= "3001" } == true)
    }

    @Test func theGapIsTakenWithTheTrimWhenTheBudgetAllows() async throws {
        let store = try S.store()
        try await S.load(store, .refresh, ids: Array(1...100), limit: 5000)
        try await S.load(store, .refresh, ids: Array(1001...1600), limit: 600)
        var retention = MastodonRetention()
        retention.maxRowsPerPass = 150
        // 100 statuses, the gap, then 49 of the page: the budget covers the gap, the rows after it go in turn.
        let report = try await store.sweep(retention)
        #expect(report.total == 150 && report.entries == 150 && report.moreRemains)
        let entries = try await store.entries(S.home)
        #expect(entries.first?.statusID == "1050")
        #expect(!entries.dropLast().contains { $0.isGap })
    }

    @Test func theDefaultsKeepOtherTimelines200AndNotifications500() async throws {
        let store = try S.store()
        let local = MastodonTimelineKey(account: S.home.account, timeline: "local")
        let tag = MastodonTimelineKey(account: S.home.account, timeline: MastodonTimelineKey.tag("swift"))
        try await S.load(store, .refresh, ids: Array(1...260), limit: 1000, key: local)
        try await S.load(store, .refresh, ids: Array(1...150), limit: 1000, key: tag)
        try await S.load(store, .refresh, ids: Array(1...520), limit: 1000)
        try await store.storeNotifications(
            (1...530).map { .init(id: ServerID(String($0)), payload: Data()) }, account: S.home.account)
        #expect(MastodonRetention() == MastodonRetention.defaultsOfTheDataModel)

        let report = try await store.sweep()
        #expect(report.entries == 60 + 20 && report.notifications == 30 && !report.moreRemains)
        #expect(try await store.entries(local).count == 200)
        #expect(try await store.entries(local).first?.statusID == "61")
        #expect(try await store.entries(tag).count == 150)
        #expect(try await store.entries(S.home).count == 500)
        let kept = try await store.notifications(account: S.home.account)
        #expect(kept.count == 500)
        #expect(kept.map(\.id).min() == "31", "the oldest by ServerID order go")
    }
}

extension MastodonRetention {
    /// The data model's limits spelled out, so a changed default fails the test rather than moving with it.
    fileprivate static var defaultsOfTheDataModel: MastodonRetention {
        var retention = MastodonRetention()
        retention.homeEntries = 500
        retention.otherEntries = 200
        retention.notifications = 500
        retention.orphanAge = .seconds(7 * 24 * 3600)
        retention.maxRowsPerPass = 2000
        return retention
    }
}
