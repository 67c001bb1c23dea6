import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsPush

/// The thread identifier is the conversation's: replies further down one thread share the thread of its oldest
/// post the engine stored.
@Suite(.timeLimit(.minutes(1))) struct RaiserThreadTests {
    @Test func repliesDownOneThreadShareTheThreadOfItsOldestStoredPost() async throws {
        let fixture = try await GlueFixture()
        let root = await fixture.server.post(as: fixture.bob, "plans @alice?", mentioning: [fixture.alice])
        let reply = await fixture.server.post(
            as: fixture.carol, "@alice @bob saturday", inReplyTo: root, mentioning: [fixture.alice])
        await fixture.server.post(
            as: fixture.bob, "@alice @carol works for me", inReplyTo: reply, mentioning: [fixture.alice])
        let raised = try await fixture.raiser.pollAndRaise().compactMap(\.decision.request)
        #expect(raised.map(\.body.text).count == 3)
        #expect(Set(raised.map(\.threadIdentifier)) == ["\(GlueFixture.account)#conversation:\(root)"])
        // Another thread stays apart.
        await fixture.server.post(as: fixture.carol, "unrelated @alice", mentioning: [fixture.alice])
        let other = try await fixture.raiser.pollAndRaise().compactMap(\.decision.request)
        #expect(other.count == 1)
        #expect(other.first?.threadIdentifier != "\(GlueFixture.account)#conversation:\(root)")
    }
}
