import Foundation
import Testing
import TidingsCore
import TidingsPush

@Suite(.timeLimit(.minutes(1))) struct PolicySignalTests {
    typealias S = PolicyTestSupport

    func snapshot(unread: Int, mentions: [ServerID] = []) -> WidgetSnapshot {
        WidgetSnapshot(
            accounts: [
                .init(
                    account: S.account, handle: "@alice", unreadCount: unread,
                    recentMentions: mentions.map { .init(id: $0, author: "Bob", text: "hi", date: nil) })
            ], generatedAt: Date(timeIntervalSince1970: 1_780_000_000))
    }

    @Test func theBadgeIsTheUnreadGroupCountCappedAt99() {
        #expect(NotificationBadge.value(unreadCount: 0) == 0)
        #expect(NotificationBadge.value(unreadCount: 42) == 42)
        #expect(NotificationBadge.value(unreadCount: 100) == 99)
        #expect(NotificationBadge.value(unreadCount: -3) == 0)
        #expect(NotificationBadge.value(unreadCount: Int.max) == 99)
        var two = snapshot(unread: 60)
        two.accounts.append(.init(account: "b", handle: "@b", unreadCount: Int.max, recentMentions: []))
        #expect(NotificationBadge.value(two) == 99)
    }

    @Test func redrawIsSignalledWhenCountsOrMentionsChangeAndOnAppEvents() async {
        let center = NotificationSignalCenter()
        let subscription = center.subscribe()
        #expect(center.update(snapshot(unread: 1)) == [.unreadCountChanged])
        #expect(center.update(snapshot(unread: 1)) == [])
        #expect(center.update(snapshot(unread: 2, mentions: ["9"])) == [.unreadCountChanged, .mentionsChanged])
        #expect(center.update(snapshot(unread: 2, mentions: ["10"])) == [.mentionsChanged])
        center.appLeftForeground()
        center.digestTimeArrived(digestOn: false)
        center.digestTimeArrived(digestOn: true)
        center.signedOut()
        var received: [NotificationRedrawReason] = []
        for await reason in subscription {
            received.append(reason)
            if received.count == 7 { break }
        }
        #expect(
            received == [
                .unreadCountChanged, .unreadCountChanged, .mentionsChanged, .mentionsChanged, .leftForeground,
                .digestTime, .signOut,
            ])
    }

    @Test func theWidgetSnapshotIsWrittenAtomicallyOwnerOnlyAndReadBack() throws {
        let directory = try S.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("widgets.json").path
        let first = snapshot(unread: 3, mentions: ["1", "2", "3", "4", "5", "6", "7"])
        #expect(first.accounts[0].recentMentions.count == WidgetSnapshot.maximumMentions)
        try first.write(to: path)
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(try WidgetSnapshot.read(from: path) == first)
        let second = snapshot(unread: 4)
        try second.write(to: path)
        #expect(try WidgetSnapshot.read(from: path) == second)
        // Only the snapshot is left in the directory: no temporary file.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["widgets.json"])

        try Data("[[[[".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: WidgetSnapshotError.malformed) { try WidgetSnapshot.read(from: path) }
        #expect(throws: WidgetSnapshotError.ioFailure) {
            try second.write(to: directory.appendingPathComponent("missing/widgets.json").path)
        }
    }

    @Test func signOutWithdrawsTheAccountsNotificationsAndForgetsItsRaisedSet() async throws {
        let store = try S.store()
        let context = S.context(S.date(2026, 6, 10, 12))
        for candidate in [
            S.candidate("1"), S.candidate("2", .favourite, group: "g"),
            S.candidate("3", .favourite, group: "g", count: 2),
        ] {
            _ = try await store.decideAndRecord(candidate, settings: NotificationSettings(), context: context)
        }
        var other = S.candidate("1")
        other.account = "carol@example.social"
        _ = try await store.decideAndRecord(other, settings: NotificationSettings(), context: context)

        let signOut = try await store.signOut(account: S.account)
        #expect(
            signOut.withdrawRequestIdentifiers == [
                "alice@example.social#group:g", "alice@example.social#notification:1",
            ])
        #expect(signOut.removeChannelGroup == S.account)
        #expect(try await store.raisedState(for: S.candidate("1")) == .none)
        #expect(try await store.raisedState(for: other).notificationRaised)
        #expect(
            try await store.decideAndRecord(S.candidate("1"), settings: NotificationSettings(), context: context)
                .label == "raise")
    }

    @Test func whetherThePermissionWasAskedIsPersisted() async throws {
        let directory = try S.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store.sqlite").path
        do {
            let database = try await SQLiteDatabase.open(path: path, schema: NotificationPolicyStore.schema)
            let store = NotificationPolicyStore(database: database)
            #expect(try await store.permissionWasAsked() == false)
            try await store.markPermissionAsked()
            database.close()
        }
        let database = try await SQLiteDatabase.open(path: path, schema: NotificationPolicyStore.schema)
        #expect(try await NotificationPolicyStore(database: database).permissionWasAsked())
        // Signing an account out does not forget it.
        _ = try await NotificationPolicyStore(database: database).signOut(account: S.account)
        #expect(try await NotificationPolicyStore(database: database).permissionWasAsked())
    }
}
