import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox
import TidingsSandboxKit

/// An action on a status reaches every cached copy of it: its own row and every boost of it, so an undo
/// tapped on any copy finds the state the reader left (found by the engine model test).
@Suite(.timeLimit(.minutes(1)))
struct BoostCopyActionTests {
    /// Bob posts; carol and dave (both followed by alice) boost it: alice's home holds three copies.
    func fixtureWithTwoBoosts() async throws -> (EngineFixture, original: ServerID, boosts: [ServerID]) {
        let fixture = try await EngineFixture()
        let original = await fixture.postMany(1)[0]
        var boosts: [ServerID] = []
        for name in ["carol", "dave"] {
            let id = await fixture.server.addAccount(username: name, token: "\(name)-token")
            await fixture.server.follow(fixture.alice, id)
            let client = MastodonAPIClient(
                server: URL(string: "https://sandbox.invalid")!, accountKey: "\(name)-test",
                authorization: MastodonAuthorization(token: "\(name)-token"),
                transport: MastodonSandboxTransport(server: fixture.http))
            boosts.append(try await client.perform(.reblog, status: original).id)
        }
        try await fixture.engine.refresh()
        #expect(Set(try await fixture.cachedHome()) == Set([original] + boosts))
        return (fixture, original, boosts)
    }

    @Test(arguments: [MastodonAction.favourite, .bookmark, .reblog])
    func anActionThroughABoostShowsOnEveryCopyAndItsUndoWorksFromAnother(_ action: MastodonAction) async throws {
        let (fixture, original, boosts) = try await fixtureWithTwoBoosts()
        let engine = fixture.engine
        #expect(try await engine.perform(action, on: boosts[0]) != nil)

        func shown(_ id: ServerID) async throws -> Bool? {
            let status = try await engine.status(id)
            let inner = status?.reblog ?? status
            switch action {
            case .favourite: return inner?.favourited
            case .bookmark: return inner?.bookmarked
            default: return inner?.reblogged
            }
        }
        for id in [original] + boosts { #expect(try await shown(id) == true, "copy \(id)") }
        #expect(try await engine.status(original)?.favouritesCount == (action == .favourite ? 1 : 0))

        // The undo tapped on another copy is not "nothing to do", and reaches the server and every copy.
        #expect(try await engine.perform(action.inverse, on: boosts[1]) != nil)
        for id in [original] + boosts { #expect(try await shown(id) == false, "copy \(id)") }
        let server = try await engine.client.status(id: original)
        let serverShown =
            action == .favourite ? server.favourited : action == .bookmark ? server.bookmarked : server.reblogged
        #expect(serverShown == false)
        #expect(try await engine.pendingActions().isEmpty)
    }

    @Test func aRefusedActionThroughABoostIsRevertedOnEveryCopy() async throws {
        let (fixture, original, boosts) = try await fixtureWithTwoBoosts()
        fixture.faults.add(.status(422), on: .path("/api/v1/statuses"), times: 1)
        #expect(try await fixture.engine.perform(.favourite, on: boosts[0]) != nil)
        for id in [original] + boosts {
            let status = try await fixture.engine.status(id)
            #expect((status?.reblog ?? status)?.favourited != true, "copy \(id)")
        }
        #expect(try await fixture.engine.status(original)?.favouritesCount == 0)
    }
}
