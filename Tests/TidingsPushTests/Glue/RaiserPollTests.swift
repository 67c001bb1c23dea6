import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsPush

/// The poll path: the engine's stored notifications (v2 groups from the in-process sandbox, v1 on a server
/// without v2) go through the policy, once per server ID.
@Suite(.timeLimit(.minutes(1))) struct RaiserPollTests {
    @Test func aMentionIsRaisedOnceAcrossPolls() async throws {
        let fixture = try await GlueFixture()
        await fixture.server.post(as: fixture.bob, "hi @alice", mentioning: [fixture.alice])
        let first = try await fixture.raiser.pollAndRaise()
        #expect(first.map(\.label) == ["raise"])
        let request = try #require(first.first?.decision.request)
        #expect(request.title.text == "Bob mentioned you")
        #expect(request.body.text == "hi @alice")
        // Nothing new on the server; the stored mention is decided again and dropped.
        #expect(try await fixture.raiser.pollAndRaise().map(\.label) == ["drop:alreadyRaised"])
    }

    @Test func aGrowingGroupUpdatesItsNotificationInPlace() async throws {
        let fixture = try await GlueFixture()
        let status = await fixture.server.post(as: fixture.alice, "my post")
        try await fixture.favourite(status, by: "bob-token")
        let first = try await fixture.raiser.pollAndRaise()
        #expect(first.map(\.label) == ["raise"])
        let identifier = try #require(first.first?.decision.request?.identifier)
        try await fixture.favourite(status, by: "carol-token")
        let second = try await fixture.raiser.pollAndRaise()
        #expect(second.map(\.label) == ["update"])
        #expect(second.first?.decision.request?.identifier == identifier)
        #expect(second.first?.decision.request?.title.text.lowercased().contains("carol") == true)
    }

    @Test func theMarkerSuppressesWhatWasReadElsewhere() async throws {
        let fixture = try await GlueFixture()
        await fixture.server.post(as: fixture.bob, "one @alice", mentioning: [fixture.alice])
        try await fixture.engine.pollNotifications()
        let stored = try #require(try await fixture.engine.notificationGroups().first?.group.mostRecentNotificationID)
        #expect(try await fixture.engine.markRead(.notifications, upTo: stored))
        await fixture.server.post(as: fixture.bob, "two @alice", mentioning: [fixture.alice])
        let decisions = try await fixture.raiser.pollAndRaise()
        // Only the second mention is past the marker; the first is never raised.
        #expect(decisions.map(\.label) == ["raise"])
        #expect(decisions.first?.decision.request?.body.text == "two @alice")
    }

    @Test func version1NotificationsAreRaisedToo() async throws {
        let fixture = try await GlueFixture(variant: .pleroma)
        await fixture.server.post(as: fixture.bob, "hi @alice", mentioning: [fixture.alice])
        #expect(try await fixture.raiser.pollAndRaise().map(\.label) == ["raise"])
        #expect(try await fixture.engine.notificationGroups().isEmpty)
        #expect(try await fixture.raiser.pollAndRaise().map(\.label) == ["drop:alreadyRaised"])
    }

    @Test func aSwitchedOffCategoryIsDropped() async throws {
        var configuration = NotificationRaiserConfiguration()
        configuration.settings.enabledCategories.remove(.favourite)
        let fixture = try await GlueFixture(configuration: configuration)
        let status = await fixture.server.post(as: fixture.alice, "my post")
        try await fixture.favourite(status, by: "bob-token")
        #expect(try await fixture.raiser.pollAndRaise().map(\.label) == ["drop:categoryOff"])
    }

    @Test func decisionsReachTheAppThroughEventsAndTheWidget() async throws {
        let fixture = try await GlueFixture()
        let events = fixture.raiser.events()
        let redraws = fixture.board.signals.subscribe()
        await fixture.server.post(as: fixture.bob, "hi @alice", mentioning: [fixture.alice])
        await fixture.raiser.startFollowingPolls()
        // The poll is the engine's (as the scheduler or the user stream would start it); the raiser follows.
        try await fixture.engine.pollNotifications()
        var iterator = events.makeAsyncIterator()
        let event = try #require(await iterator.next())
        guard case .decided(let decision) = event else {
            Issue.record("unexpected \(event)")
            return
        }
        #expect(decision.label == "raise")
        #expect(decision.origin == .poll)
        var redrawIterator = redraws.makeAsyncIterator()
        #expect(await redrawIterator.next() == .unreadCountChanged)
        #expect(await redrawIterator.next() == .mentionsChanged)
        let snapshot = fixture.board.snapshot(at: GlueFixture.epoch)
        #expect(snapshot.accounts.first?.unreadCount == 1)
        #expect(snapshot.accounts.first?.recentMentions.map(\.text) == ["hi @alice"])
        #expect(fixture.board.badge == 1)
        await fixture.raiser.stopFollowingPolls()
    }
}

/// The board writes the snapshot file the widget extension reads.
@Suite(.timeLimit(.minutes(1))) struct WidgetBoardFileTests {
    @Test func theSnapshotFileHoldsEveryAccountsLineAndLosesASignedOutOne() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("board-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("widget.json").path
        let board = NotificationWidgetBoard(path: path)
        let redraws = board.signals.subscribe()
        let alice = WidgetSnapshot.Account(account: "alice", handle: "alice@a", unreadCount: 3, recentMentions: [])
        let bob = WidgetSnapshot.Account(account: "bob", handle: "bob@b", unreadCount: 120, recentMentions: [])
        #expect(try board.update(alice, at: GlueFixture.epoch) == [.unreadCountChanged])
        #expect(try board.update(bob, at: GlueFixture.epoch) == [.unreadCountChanged])
        // The same line again changes nothing a widget shows: no redraw.
        #expect(try board.update(bob, at: GlueFixture.epoch).isEmpty)
        #expect(try WidgetSnapshot.read(from: path).accounts.map(\.account) == ["alice", "bob"])
        #expect(board.badge == 99)
        try board.remove(account: "bob", at: GlueFixture.epoch)
        #expect(try WidgetSnapshot.read(from: path).accounts.map(\.account) == ["alice"])
        var iterator = redraws.makeAsyncIterator()
        var reasons: [NotificationRedrawReason] = []
        for _ in 0..<4 { reasons.append(await iterator.next() ?? .digestTime) }
        #expect(reasons == [.unreadCountChanged, .unreadCountChanged, .signOut, .unreadCountChanged])
    }
}
