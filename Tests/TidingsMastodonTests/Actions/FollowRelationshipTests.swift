import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox
import TidingsSandboxKit

/// Follow and unfollow as optimistic actions against the sandbox: the cached relationship shows them at once,
/// pending, written with the outbox row; the server's `Relationship` settles it (a locked account's request);
/// a refusal reverts it with a reason; a relaunch keeps it pending and replays it.
@Suite(.timeLimit(.minutes(1)))
struct FollowRelationshipTests {
    /// The cached relationship as (following, requested, pending), nil when none is cached.
    static func shown(_ engine: MastodonAccountEngine, _ id: ServerID) async throws -> [Bool]? {
        guard let cached = try await engine.relationship(with: id) else { return nil }
        return [cached.following, cached.requested, cached.pending]
    }

    @Test func aFollowShowsAtOnceIsPendingAndTheServersRelationshipSettlesIt() async throws {
        let fixture = try await EngineFixture()
        let dan = ServerID(await fixture.server.addAccount(username: "dan", token: "dan-token"))
        #expect(try await Self.shown(fixture.engine, dan) == nil)
        // The server answers a second later on its clock: meanwhile the relationship shows the follow, pending.
        fixture.faults.add(.delay(.seconds(1)), on: .path("/api/v1/accounts"), times: 1)
        let engine = fixture.engine
        let follow = Task { try await engine.perform(.follow, on: dan) }
        await fixture.clock.waitForSleepers(1)
        #expect(try await Self.shown(engine, dan) == [true, false, true])
        #expect(try await engine.pendingActions().map(\.action) == [.follow])
        await fixture.clock.advance(by: .seconds(1))
        _ = try await follow.value
        #expect(try await Self.shown(engine, dan) == [true, false, false])
        #expect(
            try await engine.relationship(with: dan)?.confirmed
                == MastodonRelationship(
                    id: dan, following: true, requested: false))
        // Following again is nothing to do; unfollowing goes the same way.
        #expect(try await engine.perform(.follow, on: dan) == nil)
        try await engine.perform(.unfollow, on: dan)
        #expect(try await Self.shown(engine, dan) == [false, false, false])
        #expect(try await engine.client.relationship(following: false, account: dan).following == false)
    }

    @Test func aLockedAccountTurnsTheFollowIntoARequestAndAnUnfollowWithdrawsIt() async throws {
        let fixture = try await EngineFixture()
        let dan = await fixture.server.addAccount(username: "dan", token: "dan-token")
        await fixture.server.setLocked(dan, true)
        var changes = fixture.engine.changes().makeAsyncIterator()
        try await fixture.engine.perform(.follow, on: ServerID(dan))
        #expect(try await Self.shown(fixture.engine, ServerID(dan)) == [false, true, false])
        var sawRelationship = false
        while let change = await changes.next() {
            if change == .relationship(ServerID(dan)) { sawRelationship = true }
            if case .actionConfirmed = change { break }
        }
        #expect(sawRelationship)
        try await fixture.engine.perform(.unfollow, on: ServerID(dan))
        #expect(try await Self.shown(fixture.engine, ServerID(dan)) == [false, false, false])
        #expect(await fixture.server.acceptFollowRequest(from: fixture.alice, to: dan) == false)
    }

    @Test func aRefusedUnfollowRevertsToTheServersRelationshipWithItsReason() async throws {
        let fixture = try await EngineFixture()
        let bob = ServerID(fixture.bob)
        // Alice follows bob already; the engine learns it from a follow that was nothing new to the server.
        try await fixture.engine.perform(.follow, on: bob)
        #expect(try await Self.shown(fixture.engine, bob) == [true, false, false])
        fixture.faults.add(.status(422), on: .path("/api/v1/accounts"), times: 1)
        var changes = fixture.engine.changes().makeAsyncIterator()
        try await fixture.engine.perform(.unfollow, on: bob)
        var failure: MastodonActionFailure?
        while let change = await changes.next() {
            if case .actionFailed(_, let reason) = change {
                failure = reason
                break
            }
        }
        #expect(failure == .refused)
        #expect(try await Self.shown(fixture.engine, bob) == [true, false, false])
        #expect(try await fixture.engine.pendingActions().isEmpty)
    }

    @Test func anAccountTheServerDoesNotKnowRevertsTheFollowAsNotFound() async throws {
        let fixture = try await EngineFixture()
        let ghost = ServerID("424242424242")
        var changes = fixture.engine.changes().makeAsyncIterator()
        try await fixture.engine.perform(.follow, on: ghost)
        var failure: MastodonActionFailure?
        while let change = await changes.next() {
            if case .actionFailed(_, let reason) = change {
                failure = reason
                break
            }
        }
        #expect(failure == .notFound)
        #expect(try await Self.shown(fixture.engine, ghost) == nil)
    }

    @Test func repeatedServerErrorsGiveUpAndRevertTheFollow() async throws {
        let fixture = try await EngineFixture()
        let dan = ServerID(await fixture.server.addAccount(username: "dan", token: "dan-token"))
        fixture.faults.add(.status(502), on: .path("/api/v1/accounts"))
        try await fixture.engine.perform(.follow, on: dan)
        for _ in 1..<MastodonAccountEngine.maximumActionAttempts {
            #expect(try await Self.shown(fixture.engine, dan) == [true, false, true])
            await fixture.engine.replayOutbox()
        }
        #expect(try await Self.shown(fixture.engine, dan) == [false, false, false])
    }

    @Test func aPendingFollowSurvivesARelaunchAndTheReplaySendsIt() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("follow-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("store.sqlite").path
        let fixture = try await EngineFixture(
            database: try await SQLiteDatabase.open(path: path, schema: MastodonTimelineSchema.schema))
        let dan = await fixture.server.addAccount(username: "dan", token: "dan-token")
        fixture.faults.add(.status(500), on: .path("/api/v1/accounts"))
        try await fixture.engine.perform(.follow, on: ServerID(dan))
        #expect(try await Self.shown(fixture.engine, ServerID(dan)) == [true, false, true])
        fixture.store.database.close()

        // The app relaunches: the follow still shows, pending, and the replay sends it.
        fixture.faults.clear()
        let reopened = MastodonTimelineStore(
            database: try await SQLiteDatabase.open(path: path, schema: MastodonTimelineSchema.schema))
        let engine = try await EngineFixture.engine(http: fixture.http, store: reopened, clock: fixture.clock)
        #expect(try await Self.shown(engine, ServerID(dan)) == [true, false, true])
        await engine.replayOutbox()
        #expect(try await Self.shown(engine, ServerID(dan)) == [true, false, false])
        #expect(try await engine.client.relationship(following: true, account: ServerID(dan)).following)
    }
}
