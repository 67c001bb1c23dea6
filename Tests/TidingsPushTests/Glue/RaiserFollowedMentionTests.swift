import Foundation
import Testing
import TidingsCore
import TidingsMastodon

@testable import TidingsPush

/// The digest's "mentions from followed accounts may still come at once": the raiser learns whom the reader
/// follows (`GET /api/v1/accounts/relationships`, cached with a time to live, refreshed by follow and unfollow
/// actions) and applies it on every path. alice follows bob, not carol; digest at 09:00, now 23:00 UTC.
@Suite(.timeLimit(.minutes(1))) struct RaiserFollowedMentionTests {
    static func configuration(mode: PushDeliveryMode = .wake, urgent: Bool = true) -> NotificationRaiserConfiguration {
        var configuration = NotificationRaiserConfiguration(mode: mode)
        configuration.settings.delivery = .digest(hours: [9], urgentMentionsAtOnce: urgent)
        return configuration
    }

    static func relationshipRequests(_ fixture: GlueFixture) -> Int {
        fixture.http.log.entries.filter { $0.path.hasPrefix("/api/v1/accounts/relationships") }.count
    }

    @Test func aPolledMentionFromAFollowedAccountComesAtOnceOthersWaitForTheDigest() async throws {
        let fixture = try await GlueFixture(configuration: Self.configuration())
        await fixture.server.post(as: fixture.bob, "from bob @alice", mentioning: [fixture.alice])
        await fixture.server.post(as: fixture.carol, "from carol @alice", mentioning: [fixture.alice])
        let decisions = try await fixture.raiser.pollAndRaise()
        #expect(decisions.map(\.label) == ["raise", "hold:digest"])
        #expect(decisions.first?.decision.request?.body.text == "from bob @alice")
        #expect(Self.relationshipRequests(fixture) == 1)
        // Cached: the next mention asks nothing until the time to live has passed.
        await fixture.server.post(as: fixture.bob, "again @alice", mentioning: [fixture.alice])
        #expect(try await fixture.raiser.pollAndRaise().map(\.label) == ["drop:alreadyRaised", "hold:digest", "raise"])
        #expect(Self.relationshipRequests(fixture) == 1)
        await fixture.clock.advance(by: .seconds(7 * 3600))
        await fixture.server.post(as: fixture.bob, "later @alice", mentioning: [fixture.alice])
        _ = try await fixture.raiser.pollAndRaise()
        #expect(Self.relationshipRequests(fixture) == 2)
    }

    @Test func withTheSettingOffAFollowedMentionWaitsToo() async throws {
        let fixture = try await GlueFixture(configuration: Self.configuration(urgent: false))
        await fixture.server.post(as: fixture.bob, "from bob @alice", mentioning: [fixture.alice])
        #expect(try await fixture.raiser.pollAndRaise().map(\.label) == ["hold:digest"])
        #expect(Self.relationshipRequests(fixture) == 0)
    }

    @Test func anUnfollowActionIsSeenAtOnce() async throws {
        let fixture = try await GlueFixture(configuration: Self.configuration())
        await fixture.raiser.startFollowingPolls()
        await fixture.server.post(as: fixture.bob, "one @alice", mentioning: [fixture.alice])
        #expect(try await fixture.raiser.pollAndRaise().map(\.label) == ["raise"])
        let changes = fixture.engine.changes()
        try await fixture.engine.perform(.unfollow, on: ServerID(fixture.bob))
        for await change in changes {
            if case .actionConfirmed = change { break }
        }
        // The raiser reads the same change on its own subscription; no request tells it.
        let requests = Self.relationshipRequests(fixture)
        while await fixture.raiser.cachedFollowing(ServerID(fixture.bob)) != false { await Task.yield() }
        await fixture.raiser.stopFollowingPolls()
        await fixture.server.post(as: fixture.bob, "two @alice", mentioning: [fixture.alice])
        let after = try await fixture.raiser.pollAndRaise()
        #expect(after.map(\.label) == ["drop:alreadyRaised", "hold:digest"])
        #expect(Self.relationshipRequests(fixture) == requests)
    }

    @Test func aStreamedMentionFromAFollowedAccountComesAtOnce() async throws {
        let fixture = try await GlueFixture(configuration: Self.configuration())
        let json = #"""
            {"id":"900","type":"mention","account":{"id":"\#(fixture.bob)","username":"bob","acct":"bob"},
             "status":{"id":"901","content":"<p>streamed @alice</p>","visibility":"public","created_at":"2026-12-01T23:00:00Z"}}
            """#
        let notification = try MastodonWire.decode(MastodonNotification.self, from: Data(json.utf8))
        #expect(try await fixture.raiser.streamed(notification)?.label == "raise")
        let fromCarol = json.replacingOccurrences(of: #""id":"\#(fixture.bob)""#, with: #""id":"\#(fixture.carol)""#)
            .replacingOccurrences(of: #""id":"900""#, with: #""id":"902""#)
        let other = try MastodonWire.decode(MastodonNotification.self, from: Data(fromCarol.utf8))
        #expect(try await fixture.raiser.streamed(other)?.label == "hold:digest")
    }

    @Test func aPushedMentionADigestWouldHoldIsPolledToLearnItsAuthor() async throws {
        let fixture = try await GlueFixture(configuration: Self.configuration(mode: .content))
        try await fixture.subscribe()
        await fixture.server.post(as: fixture.bob, "pushed @alice", mentioning: [fixture.alice])
        let push = try #require(await fixture.receivedPushes(1).first)
        let handling = try await fixture.raiser.handle(push)
        guard case .woke(let decisions) = handling else {
            Issue.record("not polled: \(handling)")
            return
        }
        #expect(decisions.map(\.label) == ["raise"])
        #expect(decisions.first?.decision.request?.body.text == "pushed @alice")
    }

    @Test func theDigestSummaryLeavesAFollowedMentionToBeRaisedOnItsOwn() async throws {
        var configuration = Self.configuration()
        configuration.settings.quietHours = QuietHours(start: (22, 0), end: (7, 0))
        let fixture = try await GlueFixture(configuration: configuration)
        await fixture.server.post(as: fixture.bob, "from bob @alice", mentioning: [fixture.alice])
        await fixture.server.post(as: fixture.carol, "from carol @alice", mentioning: [fixture.alice])
        // The hold starts the digest's count at 23:00: the 09:00 job delivers.
        #expect(try await fixture.raiser.pollAndRaise().map(\.label) == ["hold:quietHours", "hold:quietHours"])
        await fixture.clock.advance(by: .seconds(10 * 3600))  // 09:00, the digest time
        let released = try await fixture.raiser.releaseHeld()
        #expect(released.digest?.serverIDs.count == 1, "only carol's mention is summarised")
        #expect(released.decisions.map(\.label) == ["raise", "drop:alreadyRaised"])
        #expect(released.decisions.first?.decision.request?.body.text == "from bob @alice")
    }
}
