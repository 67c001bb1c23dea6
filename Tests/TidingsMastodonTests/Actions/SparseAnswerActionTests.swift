import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox

/// Actions against a server whose answers leave the reader's state out (the sandbox's Pleroma variant, sparse
/// fields): a confirmed action must still show, so its undo is not "nothing to do". Found by
/// `EngineModelTests` (a boost confirmed by a sparse answer, then its undo never sent).
@Suite(.timeLimit(.minutes(1)))
struct SparseAnswerActionTests {
    @Test(arguments: [
        (MastodonAction.reblog, MastodonAction.unreblog), (.favourite, .unfavourite), (.bookmark, .unbookmark),
    ])
    func aConfirmedActionStillShowsWhenTheAnswerLeavesItsFieldOut(
        _ actions: (MastodonAction, MastodonAction)
    ) async throws {
        let fixture = try await EngineFixture(variant: .pleroma)
        let id = await fixture.postMany(1)[0]
        try await fixture.engine.refresh()
        let engine = fixture.engine
        #expect(try await engine.perform(actions.0, on: id) != nil)
        #expect(try await engine.pendingActions().isEmpty)
        let shown = try #require(try await engine.status(id))
        switch actions.0 {
        case .reblog: #expect(shown.reblogged == true)
        case .favourite: #expect(shown.favourited == true)
        default: #expect(shown.bookmarked == true)
        }
        // The undo is sent, and the server (read with every field on) no longer shows the action.
        #expect(try await engine.perform(actions.1, on: id) != nil)
        var full = MastodonSandboxVariant.pleroma
        full.sparseFields = false
        await fixture.server.setVariant(full)
        let server = try await engine.client.status(id: id)
        #expect(server.reblogged == false && server.favourited == false && server.bookmarked == false)
    }
}
