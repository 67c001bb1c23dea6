import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox
import TidingsSandboxKit

/// The reader's own pin, mute and poll vote survive an edit — streamed (no reader's view) or refetched — on
/// the status and on each boost of it; and the sandbox's polls behave as Mastodon's.
@Suite(.timeLimit(.minutes(1)))
struct ReaderStateThroughEditTests {
    func client(_ fixture: EngineFixture, _ token: String) -> MastodonAPIClient {
        MastodonAPIClient(
            server: URL(string: "https://sandbox.invalid")!, accountKey: "\(token)-test",
            authorization: MastodonAuthorization(token: token),
            transport: MastodonSandboxTransport(server: fixture.http))
    }

    /// Alice's own post with a poll, boosted by carol (whom alice follows), pinned, muted and voted by alice.
    func fixture() async throws -> (EngineFixture, original: ServerID, boost: ServerID) {
        let fixture = try await EngineFixture()
        let original = ServerID(await fixture.server.post(as: fixture.alice, "which?", poll: ["yes", "no"]))
        let carol = await fixture.server.addAccount(username: "carol", token: "carol-token")
        await fixture.server.follow(fixture.alice, carol)
        let boost = try await client(fixture, "carol-token").perform(.reblog, status: original).id
        try await fixture.engine.refresh()
        let alice = client(fixture, "alice-token")
        #expect(try await alice.setPinned(true, status: original).pinned == true)
        let pollID = try #require(try await fixture.engine.status(original)?.poll?.id)
        let voted = try await alice.vote(poll: pollID, choices: [1])
        #expect(voted.voted == true)
        #expect(voted.ownVotes == [1])
        #expect(voted.options.map(\.votesCount) == [0, 1])
        try await fixture.engine.perform(.mute, on: boost)
        try await fixture.engine.refetchStatus(original)
        return (fixture, original, boost)
    }

    func expectReaderState(_ fixture: EngineFixture, _ ids: [ServerID], content: String) async throws {
        for id in ids {
            let copy = try #require(try await fixture.engine.status(id))
            let shown = copy.reblog ?? copy
            #expect(shown.content == content, "copy \(id)")
            #expect(shown.pinned == true, "copy \(id)")
            #expect(shown.muted == true, "copy \(id)")
            #expect(shown.poll?.voted == true, "copy \(id)")
            #expect(shown.poll?.ownVotes == [1], "copy \(id)")
        }
    }

    @Test func pinMuteAndVoteSurviveAStreamedEdit() async throws {
        let (fixture, original, boost) = try await fixture()
        try await expectReaderState(fixture, [original, boost], content: "which?")
        #expect(await fixture.server.edit(original.rawValue, content: "which one?"))
        // As a stream sends it: the author's new version, without the reader's view.
        var edited = try await client(fixture, "bob-token").status(id: original)
        edited.pinned = nil
        edited.muted = nil
        edited.favourited = nil
        if var poll = edited.poll {
            poll.voted = nil
            poll.ownVotes = []
            edited.poll = poll
        }
        #expect(try await fixture.engine.applyEdit(edited))
        try await expectReaderState(fixture, [original, boost], content: "which one?")
    }

    @Test func pinMuteAndVoteSurviveARefetchedEdit() async throws {
        let (fixture, original, boost) = try await fixture()
        #expect(await fixture.server.edit(original.rawValue, content: "which one, then?"))
        try await fixture.engine.refetchStatus(original)
        try await expectReaderState(fixture, [original, boost], content: "which one, then?")
        #expect(try await fixture.engine.status(original)?.editedAt != nil)
    }

    @Test func theSandboxsPollsTakeOneVoteEachAndPinsOnlyTheAuthorsOwn() async throws {
        let fixture = try await EngineFixture()
        let id = ServerID(await fixture.server.post(as: fixture.bob, "pick", poll: ["a", "b", "c"], multiple: true))
        let alice = client(fixture, "alice-token")
        let pollID = try #require(try await alice.status(id: id).poll?.id)
        #expect(try await alice.status(id: id).poll?.voted == false)
        await #expect(throws: MastodonError.badRequest) { try await alice.vote(poll: pollID, choices: [7]) }
        #expect(try await alice.vote(poll: pollID, choices: [0, 2]).ownVotes == [0, 2])
        await #expect(throws: MastodonError.badRequest) { try await alice.vote(poll: pollID, choices: [1]) }
        let bobsView = try await client(fixture, "bob-token").status(id: id).poll
        #expect(bobsView?.voted == false)
        #expect(bobsView?.options.map(\.votesCount) == [1, 0, 1])
        await #expect(throws: MastodonError.badRequest) { try await alice.setPinned(true, status: id) }
        await #expect(throws: MastodonError.notFound) { try await alice.vote(poll: ServerID("404"), choices: [0]) }
    }
}
