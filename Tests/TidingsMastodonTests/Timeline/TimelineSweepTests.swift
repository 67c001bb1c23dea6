import Foundation
import Testing
import TidingsCore

@testable import TidingsMastodon

@Suite(.timeLimit(.minutes(1))) struct TimelineSweepTests {
    typealias S = TimelineTestSupport

    /// A clock the test moves by hand.
    final class Clock: Sendable {
        private let state = LockedState(Date(timeIntervalSince1970: 1_700_000_000))
        var now: Date { state.withLock { $0 } }
        func advance(days: Double) { state.withLock { $0 += days * 86_400 } }
    }

    @Test func homeKeepsItsNewestEntriesAndOtherTimelinesFewer() async throws {
        let store = try S.store()
        let local = MastodonTimelineKey(account: S.home.account, timeline: "local")
        var retention = MastodonRetention()
        retention.homeEntries = 5
        retention.otherEntries = 3
        try await S.load(store, .refresh, ids: Array(1...8), limit: 100)
        try await S.load(store, .refresh, ids: Array(1...8), limit: 100, key: local)
        let report = try await store.sweep(retention)
        #expect(report.entries == 3 + 5 && !report.moreRemains)
        #expect(S.shape(try await store.entries(S.home)) == "8 7 6 5 4")
        #expect(S.shape(try await store.entries(local)) == "8 7 6")
    }

    @Test func trimmingNeverLeavesAGapAtTheBottom() async throws {
        let store = try S.store()
        var retention = MastodonRetention()
        retention.homeEntries = 3
        try await S.load(store, .refresh, ids: [2, 1], limit: 2)
        try await S.load(store, .refresh, ids: [11, 10], limit: 2)
        #expect(S.shape(try await store.entries(S.home)) == "~ 11 10 ~ 2 1")
        try await store.sweep(retention)
        #expect(S.shape(try await store.entries(S.home)) == "~ 11 10")
    }

    @Test func orphansGoAfterSevenDaysAndStatusesInUseStay() async throws {
        let clock = Clock()
        let store = try S.store(now: { clock.now })
        try await S.load(store, .refresh, ids: [3, 2, 1], limit: 10)
        try await store.storeNotifications([.init(id: "n1", statusID: "1", payload: Data())], account: S.home.account)
        var retention = MastodonRetention()
        retention.homeEntries = 0  // every entry goes: 1 stays for its notification, 2 and 3 become orphans
        try await store.sweep(retention)
        clock.advance(days: 6.9)
        var report = try await store.sweep(retention)
        #expect(report.statuses == 0)
        clock.advance(days: 0.2)
        report = try await store.sweep(retention)
        #expect(report.statuses == 2)
        #expect(try await store.status(account: S.home.account, id: "1") != nil)
        #expect(try await store.status(account: S.home.account, id: "2") == nil)
    }

    @Test func onePassDeletesAtMostTheBudgetAndSaysMoreRemains() async throws {
        let store = try S.store()
        try await S.load(store, .refresh, ids: Array(1...2600), limit: 5000)
        var report = try await store.sweep()
        #expect(report.entries == 2000 && report.moreRemains)
        #expect(try await store.entries(S.home).count == 600)
        report = try await store.sweep()
        #expect(report.entries == 100 && !report.moreRemains)
        #expect(try await store.entries(S.home).first?.statusID == "2101")
    }

    @Test func notificationsAreDedupedByServerIDAndTrimmedByIDOrder() async throws {
        let store = try S.store()
        let account = S.home.account
        let first = try await store.storeNotifications(
            [9, 10, 11].map { .init(id: ServerID(String($0)), payload: Data("v1".utf8)) }, account: account)
        let again = try await store.storeNotifications(
            [11, 12].map { .init(id: ServerID(String($0)), payload: Data("v2".utf8)) }, account: account)
        #expect(first == 3 && again == 1)
        var retention = MastodonRetention()
        retention.notifications = 3
        let report = try await store.sweep(retention)
        #expect(report.notifications == 1)
        // "9" is the oldest by ServerID order although it sorts last as a plain string.
        #expect(try await store.notifications(account: account).map(\.id) == ["12", "11", "10"])
    }

    @Test func groupedNotificationsAreKeptPerKeyNeverRolledBackAndTrimmed() async throws {
        let store = try S.store()
        let account = S.home.account
        @Sendable func group(_ key: String, _ recent: Int) -> MastodonStoredNotificationGroup {
            MastodonStoredNotificationGroup(
                groupKey: key, mostRecentID: ServerID(String(recent)), payload: Data("\(key)@\(recent)".utf8))
        }
        try await store.database.write { db in
            try store.storeNotificationGroups([group("fav-1", 9), group("mention-2", 10)], account: account, in: db)
            // The group grows; a stale page of it later changes nothing.
            let grown = try store.storeNotificationGroups([group("fav-1", 12)], account: account, in: db)
            let stale = try store.storeNotificationGroups([group("fav-1", 11)], account: account, in: db)
            #expect(grown == 1 && stale == 0)
            try store.storeNotificationGroups([group("follow-3", 99)], account: account, in: db)
        }
        let stored = try await store.database.read { db in try store.notificationGroups(account: account, in: db) }
        #expect(stored.map(\.groupKey) == ["follow-3", "fav-1", "mention-2"])
        #expect(stored[1].payload == Data("fav-1@12".utf8))
        var retention = MastodonRetention()
        retention.notifications = 2
        let report = try await store.sweep(retention)
        #expect(report.notifications == 1)
        let kept = try await store.database.read { db in try store.notificationGroups(account: account, in: db) }
        #expect(kept.map(\.groupKey) == ["follow-3", "fav-1"])
    }
}
