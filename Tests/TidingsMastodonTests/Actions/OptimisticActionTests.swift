import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox
import TidingsSandboxKit

/// Optimistic actions and the durable outbox against the sandbox: written at once, reconciled, reverted with a
/// reason, replayed after a restart, kept through edits and refreshes.
@Suite(.timeLimit(.minutes(1)))
struct OptimisticActionTests {
    /// A fixture whose store lives in a file, so a test can reopen it as a restarted app would.
    func fileFixture(_ directory: URL) async throws -> (EngineFixture, String) {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("store.sqlite").path
        let fixture = try await EngineFixture(
            database: try await SQLiteDatabase.open(path: path, schema: MastodonTimelineSchema.schema))
        return (fixture, path)
    }

    @Test func aFavouriteShowsAtOnceIsPendingAndIsConfirmedByTheServer() async throws {
        let fixture = try await EngineFixture()
        let id = await fixture.postMany(1)[0]
        try await fixture.engine.refresh()
        // The server answers only after a second on its clock: meanwhile the cache shows the favourite, pending.
        fixture.faults.add(.delay(.seconds(1)), on: .path("/api/v1/statuses"), times: 1)
        let engine = fixture.engine
        let action = Task { try await engine.perform(.favourite, on: id) }
        await fixture.clock.waitForSleepers(1)
        #expect(try await engine.status(id)?.favourited == true)
        #expect(try await engine.status(id)?.favouritesCount == 1)
        #expect(try await engine.isPending(id))
        await fixture.clock.advance(by: .seconds(1))
        _ = try await action.value
        #expect(try await engine.isPending(id) == false)
        #expect(try await engine.status(id)?.favourited == true)
        #expect(try await fixture.serverHome().isEmpty == false)
        let serverView = try await fixture.engine.client.status(id: id)
        #expect(serverView.favourited == true)
        // Undo goes the same way; repeating the current state sends nothing.
        #expect(try await engine.perform(.favourite, on: id) == nil)
        try await engine.perform(.unfavourite, on: id)
        #expect(try await engine.status(id)?.favourited == false)
        #expect(try await fixture.engine.client.status(id: id).favourited == false)
    }

    @Test(arguments: [MastodonAction.reblog, .bookmark, .follow])
    func everyActionReachesTheServer(_ action: MastodonAction) async throws {
        let fixture = try await EngineFixture()
        let id = await fixture.postMany(1)[0]
        try await fixture.engine.refresh()
        let target =
            action == .follow ? ServerID(await fixture.server.addAccount(username: "dan", token: "dan-token")) : id
        try await fixture.engine.perform(action, on: target)
        #expect(try await fixture.engine.pendingActions().isEmpty)
        switch action {
        case .reblog: #expect(try await fixture.engine.client.status(id: id).reblogged == true)
        case .bookmark: #expect(try await fixture.engine.client.status(id: id).bookmarked == true)
        default: #expect(try await fixture.engine.client.setFollowing(true, account: target))
        }
    }

    @Test func aServerErrorKeepsTheActionPendingAcrossARestartAndTheReplaySendsIt() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("outbox-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (fixture, path) = try await fileFixture(directory)
        let id = await fixture.postMany(1)[0]
        try await fixture.engine.refresh()
        fixture.faults.add(.status(500), on: .path("/api/v1/statuses"))
        try await fixture.engine.perform(.bookmark, on: id)
        #expect(try await fixture.engine.isPending(id))
        #expect(try await fixture.engine.status(id)?.bookmarked == true)
        fixture.store.database.close()

        // The app restarts: the outbox row and the optimistic effect are still there; the replay sends it.
        fixture.faults.clear()
        let reopened = MastodonTimelineStore(
            database: try await SQLiteDatabase.open(path: path, schema: MastodonTimelineSchema.schema))
        let engine = try await EngineFixture.engine(http: fixture.http, store: reopened, clock: fixture.clock)
        #expect(try await engine.pendingActions().map(\.action) == [.bookmark])
        #expect(try await engine.status(id)?.bookmarked == true)
        await engine.replayOutbox()
        #expect(try await engine.pendingActions().isEmpty)
        #expect(try await engine.client.status(id: id).bookmarked == true)
    }

    @Test func aDeletedStatusRevertsTheActionWithAReasonAndLeavesTheCache() async throws {
        let fixture = try await EngineFixture()
        let id = await fixture.postMany(1)[0]
        try await fixture.engine.refresh()
        await fixture.server.delete(id.rawValue)
        var changes = fixture.engine.changes().makeAsyncIterator()
        try await fixture.engine.perform(.favourite, on: id)
        #expect(await changes.next() == .actionPending(MastodonPendingAction(id: 1, action: .favourite, target: id)))
        #expect(await changes.next() == .statusUpdated(id))
        #expect(
            await changes.next()
                == .actionFailed(MastodonPendingAction(id: 1, action: .favourite, target: id), reason: .notFound))
        #expect(try await fixture.engine.pendingActions().isEmpty)
        #expect(try await fixture.engine.status(id) == nil)
        #expect(try await fixture.engine.entries().isEmpty)
    }

    @Test func repeatedServerErrorsGiveUpAndRevert() async throws {
        let fixture = try await EngineFixture()
        let id = await fixture.postMany(1)[0]
        try await fixture.engine.refresh()
        fixture.faults.add(.status(502), on: .path("/api/v1/statuses"))
        var changes = fixture.engine.changes().makeAsyncIterator()
        try await fixture.engine.perform(.reblog, on: id)
        for _ in 1..<MastodonAccountEngine.maximumActionAttempts {
            #expect(try await fixture.engine.isPending(id))
            await fixture.engine.replayOutbox()
        }
        #expect(try await fixture.engine.isPending(id) == false)
        #expect(try await fixture.engine.status(id)?.reblogged == false)
        #expect(try await fixture.engine.status(id)?.reblogsCount == 0)
        var failure: MastodonActionFailure?
        while let change = await changes.next() {
            if case .actionFailed(_, let reason) = change {
                failure = reason
                break
            }
        }
        #expect(failure == .gaveUp(attempts: MastodonAccountEngine.maximumActionAttempts))
    }

    @Test func anEditOrARefreshKeepsThePendingEffectAndTheReadersState() async throws {
        let fixture = try await EngineFixture(pageLimit: 40)
        let id = await fixture.postMany(1)[0]
        try await fixture.engine.refresh()
        fixture.faults.add(.status(500), on: .path("/api/v1/statuses", method: "POST"))
        try await fixture.engine.perform(.favourite, on: id)
        // The author edits it; the stream or a refetch brings the new text without the reader's state.
        await fixture.server.edit(id.rawValue, content: "edited")
        var edited = try #require(try await fixture.engine.status(id))
        edited.content = "edited"
        edited.favourited = nil
        edited.favouritesCount = 0
        edited.editedAt = Date(timeIntervalSince1970: 1_700_000_100)
        #expect(try await fixture.engine.applyEdit(edited))
        let afterEdit = try #require(try await fixture.engine.status(id))
        #expect(afterEdit.content == "edited")
        #expect(afterEdit.favourited == true)
        #expect(try await fixture.store.status(account: "alice@sandbox", id: id)?.edited == true)
        // A refresh page that carries the server's older view does not hide the pending favourite either.
        try await fixture.engine.loadOlder()
        try await fixture.engine.recheckCachedStatuses()
        #expect(try await fixture.engine.status(id)?.favourited == true)
        #expect(try await fixture.engine.isPending(id))
    }
}
