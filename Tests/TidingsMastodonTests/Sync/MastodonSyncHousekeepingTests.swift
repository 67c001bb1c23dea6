import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox
import TidingsSandboxKit

/// App-state changes return without waiting for the network: the markers and outbox work they start runs on
/// each account's background task, in order, and a sign-out cancels it.
@Suite(.timeLimit(.minutes(1)))
struct MastodonSyncHousekeepingTests {
    private static let alice = "alice@sandbox"

    /// Runs `body` in a task and reports whether it returned while the clock stood still.
    static func returnsWithoutTheClock(_ body: @escaping @Sendable () async -> Void) async -> (Bool, Task<Void, Never>)
    {
        let returned = LockedState(false)
        let task = Task {
            await body()
            returned.withLock { $0 = true }
        }
        return (await eventually { returned.withLock { $0 } }, task)
    }

    /// Moves the clock a second at a time (the server's delays) until every account's housekeeping has run.
    static func settle(_ fixture: MastodonSyncTests.Fixture) async {
        let sync = fixture.sync
        let done = LockedState(false)
        let settling = Task {
            await sync.housekeepingSettled()
            done.withLock { $0 = true }
        }
        for _ in 0..<600 where !done.withLock({ $0 }) {
            _ = await eventually { done.withLock { $0 } || fixture.base.clock.pendingSleepers > 0 }
            await fixture.base.clock.advance(by: .seconds(1))
        }
        await settling.value
    }

    @Test func foregroundReturnsWhileTheMarkerRequestWaitsThenSyncs() async throws {
        let fixture = try await MastodonSyncTests.Fixture()
        let base = fixture.base
        let ids = await base.postMany(2)
        let engine = await fixture.add("alice-token", Self.alice)
        await fixture.sync.appStateChanged(.foreground(false))
        await fixture.sync.housekeepingSettled()
        _ = try await fixture.client("alice-token", "alice-other-device").saveMarkers(home: ids[1])
        // The server answers the markers only after 30 virtual seconds.
        base.faults.add(.delay(.seconds(30)), on: .path("/api/v1/markers"), times: 1)

        let sync = fixture.sync
        let (returned, call) = await Self.returnsWithoutTheClock { await sync.appStateChanged(.foreground(true)) }
        #expect(returned, "appStateChanged waited for the network")
        await call.value
        await Self.settle(fixture)
        #expect(try await engine.localMarker(.home) == ids[1])
        await fixture.sync.shutdown()
    }

    @Test func housekeepingRunsInTheOrderOfTheChanges() async throws {
        let fixture = try await MastodonSyncTests.Fixture()
        let base = fixture.base
        let ids = await base.postMany(3)
        let engine = await fixture.add("alice-token", Self.alice)
        try await engine.refresh()
        #expect(try await engine.markRead(.home, upTo: ids[2]))
        base.faults.add(.delay(.seconds(5)), on: .path("/api/v1/markers"), times: 1)
        // Background (its post delayed), then foreground at once: the foreground's read comes after the post.
        await fixture.sync.appStateChanged(.foreground(false))
        await fixture.sync.appStateChanged(.foreground(true))
        // The background's post reached the server before the clock moves (so the debounce cannot fire first).
        let faults = base.faults
        #expect(await eventually { faults.faults.rules.allSatisfy { $0.times == 0 } })
        await Self.settle(fixture)
        let markerRequests = base.log.entries.filter { $0.path == "/api/v1/markers" }.map(\.method)
        #expect(markerRequests.suffix(2) == ["POST", "GET"])
        #expect(await engine.markerPostCount == 1)
        #expect(try await fixture.client("alice-token", "alice-other-device").markers().home?.lastReadID == ids[2])
        await fixture.sync.shutdown()
    }

    @Test func signOutCancelsTheHousekeepingInFlight() async throws {
        let fixture = try await MastodonSyncTests.Fixture()
        let base = fixture.base
        let ids = await base.postMany(2)
        let engine = await fixture.add("alice-token", Self.alice)
        try await engine.refresh()
        #expect(try await engine.markRead(.home, upTo: ids[1]))
        base.faults.add(.delay(.seconds(60)), on: .path("/api/v1/markers"), times: 1)
        await fixture.sync.appStateChanged(.foreground(false))
        // The post reached the server, which holds it on the clock.
        let faults = base.faults
        #expect(await eventually { faults.faults.rules.allSatisfy { $0.times == 0 } })
        await fixture.sync.signOut(account: Self.alice)
        // Settled without the clock moving: the delayed post was cancelled, not waited for.
        let sync = fixture.sync
        let (settled, call) = await Self.returnsWithoutTheClock { await sync.housekeepingSettled() }
        #expect(settled)
        await base.clock.advance(by: .seconds(60))
        await call.value
        #expect(try await fixture.client("alice-token", "alice-other-device").markers().home == nil)
        await fixture.sync.shutdown()
    }
}
