import Foundation
import Testing
import TidingsCore

@testable import TidingsMastodon

@Suite(.timeLimit(.minutes(1))) struct TimelineStoreEditTests {
    typealias S = TimelineTestSupport

    @Test func deleteRemovesTheStatusFromEveryTimelineOfTheAccountOnly() async throws {
        let store = try S.store()
        let local = MastodonTimelineKey(account: S.home.account, timeline: "local")
        let other = MastodonTimelineKey.home(account: "b@example.social")
        try await S.load(store, .refresh, ids: [3, 2, 1], limit: 5)
        try await S.load(store, .refresh, ids: [2], limit: 5, key: local)
        try await S.load(store, .refresh, ids: [2], limit: 5, key: other)
        #expect(try await store.delete(account: S.home.account, id: "2") == 2)
        #expect(S.shape(try await store.entries(S.home)) == "3 1")
        #expect(S.shape(try await store.entries(local)) == "")
        #expect(S.shape(try await store.entries(other)) == "2")
        #expect(try await store.status(account: S.home.account, id: "2") == nil)
        #expect(try await store.status(account: other.account, id: "2") != nil)
    }

    @Test func aPageFetchedBeforeADeletionDoesNotResurrectIt() async throws {
        let store = try S.store()
        try await S.load(store, .refresh, ids: [2, 1], limit: 5)
        let plan = try await store.plan(.refresh, for: S.home, limit: 5)
        try await store.delete(account: S.home.account, id: "3")  // streaming delete before the page lands
        try await store.apply(S.page([4, 3]), for: plan, to: S.home)
        #expect(S.shape(try await store.entries(S.home)) == "4 2 1")
    }

    @Test func deletingTheOnlyStatusBetweenTwoGapsMergesThemAndEdgeGapsGo() async throws {
        let store = try S.store()
        try await S.load(store, .refresh, ids: [2, 1], limit: 2)
        try await S.load(store, .refresh, ids: [11, 10], limit: 2)
        try await S.load(store, .refresh, ids: [21, 20], limit: 2)
        #expect(S.shape(try await store.entries(S.home)) == "~ 21 20 ~ 11 10 ~ 2 1")
        try await store.delete(account: S.home.account, id: "11")
        try await store.delete(account: S.home.account, id: "10")
        #expect(S.shape(try await store.entries(S.home)) == "~ 21 20 ~ 2 1")
        try await store.delete(account: S.home.account, id: "21")
        try await store.delete(account: S.home.account, id: "20")
        // The gaps merge into the open one on top: newer statuses (the full pages' remainder) are still due.
        #expect(S.shape(try await store.entries(S.home)) == "~ 2 1")
        try await store.delete(account: S.home.account, id: "2")
        try await store.delete(account: S.home.account, id: "1")
        #expect(S.shape(try await store.entries(S.home)) == "")
    }

    @Test func anEditReplacesThePayloadInPlaceThroughTheCallersMerge() async throws {
        let store = try S.store()
        try await S.load(store, .refresh, ids: [3, 2, 1], limit: 5)
        let before = try await store.entries(S.home)
        let replaced = try await store.edit(account: S.home.account, id: "2", payload: Data("edited".utf8)) {
            old, new in
            // The reader's own state (here: the old payload) survives next to the server's new text.
            Data(String(decoding: new, as: UTF8.self).utf8) + Data("|kept:".utf8) + old
        }
        #expect(replaced)
        let status = try #require(try await store.status(account: S.home.account, id: "2"))
        #expect(status.edited)
        #expect(String(decoding: status.payload, as: UTF8.self) == "edited|kept:s2")
        #expect(try await store.entries(S.home) == before)
        #expect(try await store.edit(account: S.home.account, id: "9", payload: Data()) { _, new in new } == false)
    }

    @Test func aThrowingMergeChangesNothing() async throws {
        struct Refused: Error {}
        let store = try S.store()
        try await S.load(store, .refresh, ids: [1], limit: 5)
        await #expect(throws: Refused.self) {
            try await store.edit(account: S.home.account, id: "1", payload: Data("x".utf8)) { _, _ in throw Refused() }
        }
        let status = try #require(try await store.status(account: S.home.account, id: "1"))
        #expect(!status.edited && status.payload == Data("s1".utf8))
    }

    @Test func payloadsAreSealedAtRestWhenTheAppGivesAKey() async throws {
        let store = try S.store(cipher: try ValueCipher(key: .random()))
        try await S.load(store, .refresh, ids: [1], limit: 5)
        let raw = try await store.database.read { db in
            try db.fetchOne([UInt8].self, "SELECT payload FROM mastodon_statuses")
        }
        let bytes = try #require(raw)
        #expect(!bytes.isEmpty && Data(bytes) != Data("s1".utf8))
        #expect(try await store.status(account: S.home.account, id: "1")?.payload == Data("s1".utf8))
        try await store.storeNotifications([.init(id: "n1", payload: Data("note".utf8))], account: "a")
        #expect(try await store.notifications(account: "a").first?.payload == Data("note".utf8))
    }

    @Test func timelinesAreDisposableAndAccountsAndOutboxDurable() {
        let schema = MastodonTimelineSchema.schema
        // Read markers are durable too: a lost marker would show read posts as new again.
        #expect(Set(schema.durableTables) == ["mastodon_accounts", "mastodon_outbox", "tidings_markers"])
        #expect(schema.tables.contains(.disposable("mastodon_timeline_cursors")))
        #expect(schema.tables.contains(.disposable("mastodon_notification_groups")))
        #expect(schema.tables.contains(.disposable("mastodon_timeline_entries")))
        #expect(schema.tables.contains(.disposable("mastodon_statuses")))
    }
}
