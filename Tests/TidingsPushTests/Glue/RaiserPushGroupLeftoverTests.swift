import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsPush

/// A content-mode push that could not be matched to the group the poll had raised (its body is not the post's
/// text as the engine converts it) is shown beside the group; once the poll sees the group grown to hold it, the
/// group's notification is updated in place and the pushed one is withdrawn, once: the person sees one
/// notification per group in the end.
@Suite(.timeLimit(.minutes(1))) struct RaiserPushGroupLeftoverTests {
    @Test func aPushShownBesideItsGroupIsWithdrawnWhenThePolledGroupGrowsToHoldIt() async throws {
        let fixture = try await GlueFixture(configuration: NotificationRaiserConfiguration(mode: .content))
        try await fixture.subscribe()
        // The sandbox pushes the status's HTML as the body; the engine matches on its plain text: no match.
        let status = await fixture.server.post(as: fixture.alice, "<p>my <b>post</b></p>")
        try await fixture.favourite(status, by: "bob-token")
        _ = await fixture.receivedPushes(1)  // bob's push is lost: the poll raises his favourite
        let polled = try await fixture.raiser.pollAndRaise()
        #expect(polled.map(\.label) == ["raise"])
        let group = try #require(polled.first?.decision.request?.identifier)

        try await fixture.favourite(status, by: "carol-token")
        guard
            case .decided(let pushed) = try await fixture.raiser.handle(
                try #require(await fixture.receivedPushes(2).last))
        else {
            Issue.record("carol's push was not decided")
            return
        }
        let beside = try #require(pushed.decision.request?.identifier)
        #expect(beside != group, "the push was not matched to the group: it is shown beside it")

        let events = fixture.raiser.events()
        let grown = try await fixture.raiser.pollAndRaise()
        #expect(grown.map(\.label) == ["update"])
        #expect(grown.first?.decision.request?.identifier == group)
        let withdrawn = await fixture.withdrawals(events)
        #expect(withdrawn == [[beside]], "the pushed notification the group now holds is withdrawn")
        // Once: the next poll withdraws nothing more.
        let again = fixture.raiser.events()
        #expect(try await fixture.raiser.pollAndRaise().map(\.label) == ["drop:alreadyRaised"])
        let more = await fixture.withdrawals(again)
        #expect(more.isEmpty)
    }
}
