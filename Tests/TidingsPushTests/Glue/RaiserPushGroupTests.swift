import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsPush

/// Content mode and v2 groups: a Web Push payload names no `group_key`, yet favourites of one post must show
/// as one notification, raised once and updated in place under one request identifier, whichever of push and
/// poll comes first (issue 12).
@Suite(.timeLimit(.minutes(1))) struct RaiserPushGroupTests {
    private static func contentFixture() async throws -> GlueFixture {
        let fixture = try await GlueFixture(configuration: NotificationRaiserConfiguration(mode: .content))
        try await fixture.subscribe()
        return fixture
    }

    private func decided(_ handling: PushHandling) throws -> AccountNotificationDecision {
        guard case .decided(let decision) = handling else { throw HandlingError.notDecided("\(handling)") }
        return decision
    }

    private enum HandlingError: Error { case notDecided(String) }

    @Test func pushPushPollShowsOneNotificationUpdatedInPlace() async throws {
        let fixture = try await Self.contentFixture()
        _ = await fixture.server.addAccount(username: "dave", token: "dave-token")
        let status = await fixture.server.post(as: fixture.alice, "my post")
        // Each push delivered before the next favourite, so they are handled in the server's order.
        try await fixture.favourite(status, by: "bob-token")
        _ = await fixture.receivedPushes(1)
        try await fixture.favourite(status, by: "carol-token")
        let pushes = await fixture.receivedPushes(2)
        let first = try decided(try await fixture.raiser.handle(pushes[0]))
        #expect(first.label == "raise")
        let identifier = try #require(first.decision.request?.identifier)
        let second = try decided(try await fixture.raiser.handle(pushes[1]))
        #expect(second.label == "update")
        #expect(second.decision.request?.identifier == identifier)
        #expect(second.decision.request?.title.text == "carol favourited your post")
        // The poll sees the server's group, which holds both pushed notifications: nothing more is shown.
        let polled = try await fixture.raiser.pollAndRaise()
        #expect(polled.map(\.label) == ["drop:alreadyRaised"])
        // The group grows on the server: it updates the pushed notification, under the same identifier.
        try await fixture.favourite(status, by: "dave-token")
        let grown = try await fixture.raiser.pollAndRaise()
        #expect(grown.map(\.label) == ["update"])
        #expect(grown.first?.decision.request?.identifier == identifier)
    }

    @Test func pushThenPollGrowsThePushedNotification() async throws {
        let fixture = try await Self.contentFixture()
        let status = await fixture.server.post(as: fixture.alice, "my post")
        try await fixture.favourite(status, by: "bob-token")
        let first = try decided(try await fixture.raiser.handle(try #require(await fixture.receivedPushes(1).first)))
        let identifier = try #require(first.decision.request?.identifier)
        // Carol's push is lost; the poll learns of her favourite as the group's newest notification.
        try await fixture.favourite(status, by: "carol-token")
        let polled = try await fixture.raiser.pollAndRaise()
        #expect(polled.map(\.label) == ["update"])
        #expect(polled.first?.decision.request?.identifier == identifier)
        #expect(polled.first?.decision.request?.title.text == "Carol and 1 others favourited your post")
    }

    @Test func pollThenPushUpdatesThePolledGroup() async throws {
        let fixture = try await Self.contentFixture()
        let status = await fixture.server.post(as: fixture.alice, "my post")
        try await fixture.favourite(status, by: "bob-token")
        _ = await fixture.receivedPushes(1)  // bob's push is lost: the poll raises his favourite
        let polled = try await fixture.raiser.pollAndRaise()
        #expect(polled.map(\.label) == ["raise"])
        let identifier = try #require(polled.first?.decision.request?.identifier)
        try await fixture.favourite(status, by: "carol-token")
        let pushed = try decided(try await fixture.raiser.handle(try #require(await fixture.receivedPushes(2).last)))
        #expect(pushed.label == "update")
        #expect(pushed.decision.request?.identifier == identifier)
        #expect(try await fixture.raiser.pollAndRaise().map(\.label) == ["drop:alreadyRaised"])
    }

    @Test func favouritesOfTwoPostsStayTwoNotifications() async throws {
        let fixture = try await Self.contentFixture()
        let one = await fixture.server.post(as: fixture.alice, "first post")
        let two = await fixture.server.post(as: fixture.alice, "second post")
        try await fixture.favourite(one, by: "bob-token")
        try await fixture.favourite(two, by: "carol-token")
        let pushes = await fixture.receivedPushes(2)
        let first = try decided(try await fixture.raiser.handle(pushes[0]))
        let second = try decided(try await fixture.raiser.handle(pushes[1]))
        #expect([first.label, second.label] == ["raise", "raise"])
        #expect(first.decision.request?.identifier != second.decision.request?.identifier)
        #expect(try await fixture.raiser.pollAndRaise().map(\.label) == ["drop:alreadyRaised", "drop:alreadyRaised"])
    }

    @Test func aPushGroupSpansTwelveHoursAsMastodonsDoes() async throws {
        let fixture = try await Self.contentFixture()
        let status = await fixture.server.post(as: fixture.alice, "my post")
        try await fixture.favourite(status, by: "bob-token")
        let first = try decided(try await fixture.raiser.handle(try #require(await fixture.receivedPushes(1).first)))
        await fixture.clock.advance(by: .seconds(13 * 3600))
        try await fixture.favourite(status, by: "carol-token")
        let later = try decided(try await fixture.raiser.handle(try #require(await fixture.receivedPushes(2).last)))
        #expect(later.label == "raise")
        #expect(later.decision.request?.identifier != first.decision.request?.identifier)
    }
}
