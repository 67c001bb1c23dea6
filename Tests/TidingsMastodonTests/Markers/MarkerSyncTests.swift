import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox
import TidingsSandboxKit

/// Read markers: fetched on launch, merged as the maximum, posted debounced on the virtual clock, never
/// backwards, never below the server's, 409 refetched and retried.
@Suite(.timeLimit(.minutes(1)))
struct MarkerSyncTests {
    /// Alice's markers as the server holds them.
    func serverMarkers(_ fixture: EngineFixture) async throws -> MastodonMarkers {
        let client = MastodonAPIClient(
            server: URL(string: "https://sandbox.invalid")!, accountKey: "alice-other-device",
            authorization: MastodonAuthorization(token: "alice-token"),
            transport: MastodonSandboxTransport(server: fixture.http))
        return try await client.markers()
    }

    @Test func readingPostsAtMostOncePerTenSecondsOnTheClock() async throws {
        let fixture = try await EngineFixture()
        let ids = await fixture.postMany(5)
        try await fixture.engine.refresh()
        try await fixture.engine.syncMarkers()
        #expect(try await fixture.engine.unreadPostCount() == 5)

        var changes = fixture.engine.changes().makeAsyncIterator()
        try await fixture.engine.markRead(.home, upTo: ids[1])
        try await fixture.engine.markRead(.home, upTo: ids[2])
        try await fixture.engine.markRead(.home, upTo: ids[3])
        #expect(try await fixture.engine.unreadPostCount() == 1)
        #expect(await fixture.engine.markerPostCount == 0)
        await fixture.clock.waitForSleepers(1)
        await fixture.clock.advance(by: .seconds(9))
        #expect(await fixture.engine.markerPostCount == 0)
        await fixture.clock.advance(by: .seconds(1))
        while let change = await changes.next() {
            if case .markersSaved(let home, _) = change {
                #expect(home == ids[3])
                break
            }
        }
        #expect(await fixture.engine.markerPostCount == 1)
        #expect(try await serverMarkers(fixture).home?.lastReadID == ids[3])

        // The next read waits its own ten seconds; going to the background sends it at once.
        try await fixture.engine.markRead(.home, upTo: ids[4])
        try await fixture.engine.enterBackground()
        #expect(await fixture.engine.markerPostCount == 2)
        #expect(try await serverMarkers(fixture).home?.lastReadID == ids[4])
        await fixture.clock.run()
        #expect(await fixture.engine.markerPostCount == 2)
    }

    @Test func aMarkerNeverMovesBackwardsOrPostsBelowTheServer() async throws {
        let fixture = try await EngineFixture()
        let ids = await fixture.postMany(6)
        try await fixture.engine.markRead(.home, upTo: ids[3])
        #expect(try await fixture.engine.markRead(.home, upTo: ids[1]) == false)
        #expect(try await fixture.engine.localMarker(.home) == ids[3])

        // Another device read further: the launch sync takes its value and posts nothing lower.
        let other = MastodonAPIClient(
            server: URL(string: "https://sandbox.invalid")!, accountKey: "alice-phone",
            authorization: MastodonAuthorization(token: "alice-token"),
            transport: MastodonSandboxTransport(server: fixture.http))
        _ = try await other.saveMarkers(home: ids[5])
        let postsBefore = fixture.requests("/api/v1/markers", method: "POST")
        try await fixture.engine.syncMarkers()
        #expect(try await fixture.engine.localMarker(.home) == ids[5])
        #expect(fixture.requests("/api/v1/markers", method: "POST") == postsBefore)
        try await fixture.engine.enterBackground()
        #expect(try await serverMarkers(fixture).home?.lastReadID == ids[5])
    }

    @Test func nothingIsPostedBeforeTheServersMarkersWereRead() async throws {
        let fixture = try await EngineFixture()
        let ids = await fixture.postMany(4)
        let other = MastodonAPIClient(
            server: URL(string: "https://sandbox.invalid")!, accountKey: "alice-phone",
            authorization: MastodonAuthorization(token: "alice-token"),
            transport: MastodonSandboxTransport(server: fixture.http))
        _ = try await other.saveMarkers(home: ids[3])
        // No launch sync yet: the background post first reads the server's markers and so posts nothing lower.
        try await fixture.engine.markRead(.home, upTo: ids[1])
        try await fixture.engine.enterBackground()
        #expect(try await serverMarkers(fixture).home?.lastReadID == ids[3])
        #expect(try await fixture.engine.localMarker(.home) == ids[3])
    }

    @Test func aConflictIsRefetchedMergedAsTheMaximumAndRetried() async throws {
        let fixture = try await EngineFixture()
        let ids = await fixture.postMany(4)
        try await fixture.engine.syncMarkers()
        await fixture.server.conflictNextMarkerSaves(1)
        try await fixture.engine.markRead(.home, upTo: ids[2])
        try await fixture.engine.enterBackground()
        #expect(try await serverMarkers(fixture).home?.lastReadID == ids[2])
        #expect(fixture.requests("/api/v1/markers", method: "POST") == 2)

        // Conflicts that never end give a typed error; the local marker stays where the reader is.
        await fixture.server.conflictNextMarkerSaves(10)
        try await fixture.engine.markRead(.home, upTo: ids[3])
        await #expect(throws: MastodonError.conflict) { try await fixture.engine.enterBackground() }
        #expect(try await fixture.engine.localMarker(.home) == ids[3])
    }

    @Test func markersSurviveARestartOfTheStore() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("markers-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store.sqlite").path
        let fixture = try await EngineFixture(
            database: try await SQLiteDatabase.open(path: path, schema: MastodonTimelineSchema.schema))
        let ids = await fixture.postMany(3)
        try await fixture.engine.markRead(.home, upTo: ids[2])
        fixture.store.database.close()
        let reopened = MastodonTimelineStore(
            database: try await SQLiteDatabase.open(path: path, schema: MastodonTimelineSchema.schema))
        let engine = try await EngineFixture.engine(http: fixture.http, store: reopened, clock: fixture.clock)
        #expect(try await engine.localMarker(.home) == ids[2])
        #expect(try await engine.markRead(.home, upTo: ids[1]) == false)
        // Never posted before the restart: the launch sync posts it.
        try await engine.syncMarkers()
        #expect(try await serverMarkers(fixture).home?.lastReadID == ids[2])
    }
}
