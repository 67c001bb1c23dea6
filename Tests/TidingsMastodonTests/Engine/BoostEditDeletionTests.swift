import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox
import TidingsSandboxKit

/// An edit or a deletion of a status reaches every cached copy of it: its own row and each boost that embeds
/// it (a boost of a deleted status is gone on Mastodon, and a stale page cannot bring one back).
@Suite(.timeLimit(.minutes(1)))
struct BoostEditDeletionTests {
    /// Bob posts; carol (followed by alice) boosts it; alice's home holds the status and the boost.
    func fixtureWithABoost() async throws -> (EngineFixture, original: ServerID, boost: ServerID) {
        let fixture = try await EngineFixture()
        let original = await fixture.postMany(1)[0]
        let carol = await fixture.server.addAccount(username: "carol", token: "carol-token")
        await fixture.server.follow(fixture.alice, carol)
        let boost = try await client(fixture, "carol-token").perform(.reblog, status: original).id
        try await fixture.engine.refresh()
        #expect(Set(try await fixture.cachedHome()) == [original, boost])
        return (fixture, original, boost)
    }

    func client(_ fixture: EngineFixture, _ token: String) -> MastodonAPIClient {
        MastodonAPIClient(
            server: URL(string: "https://sandbox.invalid")!, accountKey: "\(token)-test",
            authorization: MastodonAuthorization(token: token),
            transport: MastodonSandboxTransport(server: fixture.http))
    }

    @Test func aRefetchedEditReachesTheBoostKeepingTheReadersState() async throws {
        let (fixture, original, boost) = try await fixtureWithABoost()
        let engine = fixture.engine
        try await engine.perform(.favourite, on: boost)
        try await engine.perform(.bookmark, on: original)
        #expect(await fixture.server.edit(original.rawValue, content: "edited text"))

        #expect(try await engine.refetchStatus(original)?.content == "edited text")
        let inner = try #require(try await engine.status(boost)?.reblog)
        #expect(inner.content == "edited text")
        #expect(inner.editedAt != nil)
        #expect(inner.favourited == true)
        #expect(inner.bookmarked == true)
        #expect(try await engine.status(original)?.content == "edited text")
    }

    @Test func aStreamedEditReachesTheBoostKeepingPinMuteAndVote() async throws {
        let (fixture, original, boost) = try await fixtureWithABoost()
        let engine = fixture.engine
        try await engine.perform(.mute, on: boost)
        try await engine.perform(.favourite, on: original)
        // `status.update` carries the author's new version without the reader's view.
        var edited = try #require(try await engine.status(original))
        edited.content = "streamed edit"
        edited.editedAt = Date(timeIntervalSince1970: 1_800_000_000)
        edited.favourited = nil
        edited.muted = nil
        edited.bookmarked = nil
        #expect(try await engine.applyEdit(edited))

        for id in [original, boost] {
            let copy = try #require(try await engine.status(id))
            let shown = copy.reblog ?? copy
            #expect(shown.content == "streamed edit", "copy \(id)")
            #expect(shown.favourited == true, "copy \(id)")
            #expect(shown.muted == true, "copy \(id)")
        }
    }

    @Test func aRefetch404RemovesTheBoostsToo() async throws {
        let (fixture, original, boost) = try await fixtureWithABoost()
        #expect(await fixture.server.delete(original.rawValue))
        #expect(try await fixture.engine.refetchStatus(original) == nil)
        #expect(try await fixture.cachedHome().isEmpty)
        #expect(try await fixture.engine.status(boost) == nil)
    }

    @Test func aStreamDeleteOrARecheckRemovesTheBoostsToo() async throws {
        let (fixture, original, boost) = try await fixtureWithABoost()
        var changes = fixture.engine.changes().makeAsyncIterator()
        try await fixture.engine.removeDeleted([original])
        #expect(try await fixture.engine.status(boost) == nil)
        #expect(try await fixture.cachedHome().isEmpty)
        if case .deleted(let ids) = await changes.next() {
            #expect(Set(ids) == [original, boost])
        } else {
            Issue.record("no deletion told")
        }

        let (second, secondOriginal, secondBoost) = try await fixtureWithABoost()
        #expect(await second.server.delete(secondOriginal.rawValue))
        // Only the original is re-checked: its boost must go with it.
        let deleted = try await second.engine.recheckCachedStatuses([secondOriginal])
        #expect(deleted == [secondOriginal])
        #expect(try await second.engine.status(secondBoost) == nil)
        #expect(try await second.cachedHome().isEmpty)
    }

    @Test func aStalePageCannotBringBackABoostOfADeletedStatus() async throws {
        let (fixture, original, _) = try await fixtureWithABoost()
        try await fixture.engine.removeDeleted([original])
        // A page fetched before the deletion, holding another boost of it that was never cached.
        var stale = try await client(fixture, "alice-token").status(id: original)
        stale.content = "stale"
        var boost = stale
        boost.id = ServerID("99999999")
        boost.reblog = stale
        let key = MastodonTimelineKey.home(account: fixture.engine.account)
        let plan = try await fixture.store.plan(.refresh, for: key, limit: 40)
        let page = MastodonTimelinePage(
            items: [.init(id: boost.id, payload: try MastodonStatusPayload.encode(boost), boosted: original)],
            hasMore: false)
        try await fixture.store.apply(page, for: plan, to: key)
        #expect(try await fixture.cachedHome().isEmpty)
    }
}
