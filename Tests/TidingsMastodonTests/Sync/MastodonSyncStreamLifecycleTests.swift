import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsNet
import TidingsSandbox
import TidingsSandboxKit

/// Through `MastodonSync`: a user stream that gave up starts again on foreground, on network return and on an
/// account change, never on its own; refreshed capabilities re-evaluate the tiers (a streaming URL appearing
/// or going, a server falling back from v2 to v1).
@Suite(.timeLimit(.minutes(1)))
struct MastodonSyncStreamLifecycleTests {
    private static let alice = "alice@sandbox"
    private static let carol = "carol@sandbox"

    /// Moves the clock deadline by deadline (the stream's backoff, the polls) until `condition` holds.
    static func drive(_ clock: TestClock, until condition: @Sendable () async -> Bool) async -> Bool {
        for attempt in 0..<200_000 {
            if await condition() { return true }
            if attempt.isMultiple(of: 8), let deadline = clock.earliestPendingDeadline {
                await clock.advance(to: deadline)
            } else {
                await PollLoopDriver.pause(after: attempt)
            }
        }
        return await condition()
    }

    static func gaveUp(_ sync: MastodonSync, _ key: String) async -> Bool {
        if case .gaveUp(.tooManyFailures) = await sync.streamState(for: key) { return true }
        return false
    }

    /// Makes the active account's stream give up: every connection to the stream refused.
    static func failUntilGivenUp(_ fixture: MastodonSyncTests.Fixture, _ key: String) async -> Bool {
        fixture.base.faults.add(.status(503), on: .path("/api/v1/streaming"))
        let sync = fixture.sync
        let given = await drive(fixture.base.clock) { await gaveUp(sync, key) }
        fixture.base.faults.clear()
        return given
    }

    @Test func aStreamThatGaveUpStartsAgainOnForegroundNetworkAndAccountChangeOnly() async throws {
        let fixture = try await MastodonSyncTests.Fixture(preset: .normal)
        let sync = fixture.sync
        await sync.appStateChanged(.activeAccount(Self.alice))
        fixture.base.faults.add(.status(503), on: .path("/api/v1/streaming"))
        await fixture.add("alice-token", Self.alice)
        await fixture.add("carol-token", Self.carol)
        #expect(await Self.drive(fixture.base.clock) { await Self.gaveUp(sync, Self.alice) })
        fixture.base.faults.clear()
        // Given up: the table again, and nothing reconnects on its own however long it waits.
        await sync.appStateChanged(.interaction)
        #expect(await eventually { await sync.scheduler.plan(for: Self.alice)?.schedule == .every(.seconds(30)) })
        let attempts = fixture.base.requests("/api/v1/streaming")
        await fixture.base.clock.advance(by: .seconds(600))
        #expect(await Self.gaveUp(sync, Self.alice))
        #expect(fixture.base.requests("/api/v1/streaming") == attempts)

        // Foreground.
        await sync.appStateChanged(.foreground(false))
        await sync.appStateChanged(.foreground(true))
        #expect(await fixture.streamIs(Self.alice, .open))
        #expect(await eventually { await sync.scheduler.plan(for: Self.alice)?.schedule == .every(.seconds(300)) })

        // Network return.
        await sync.appStateChanged(.networkPath(.offline))
        #expect(await sync.streamState(for: Self.alice) == .stopped)
        fixture.base.faults.add(.status(503), on: .path("/api/v1/streaming"))
        await sync.appStateChanged(.networkPath(.wifi))
        #expect(await Self.drive(fixture.base.clock) { await Self.gaveUp(sync, Self.alice) })
        fixture.base.faults.clear()
        await sync.appStateChanged(.networkPath(.offline))
        await sync.appStateChanged(.networkPath(.wifi))
        #expect(await fixture.streamIs(Self.alice, .open))

        // Account change: carol's stream gives up; switching to alice and back starts it again.
        await sync.appStateChanged(.activeAccount(Self.carol))
        #expect(await sync.streamState(for: Self.alice) == .stopped)
        #expect(await Self.failUntilGivenUp(fixture, Self.carol))
        await sync.appStateChanged(.activeAccount(Self.alice))
        #expect(await fixture.streamIs(Self.alice, .open))
        await sync.appStateChanged(.activeAccount(Self.carol))
        #expect(await fixture.streamIs(Self.carol, .open))
        #expect(await sync.streamState(for: Self.alice) == .stopped)
        await sync.shutdown()
    }

    @Test func refreshedCapabilitiesOpenAndCloseTheStreamAndFallBackToVersion1() async throws {
        let fixture = try await MastodonSyncTests.Fixture(preset: .normal)
        let sync = fixture.sync
        let server = fixture.base.server
        await sync.appStateChanged(.activeAccount(Self.alice))
        // Signed in while the server looks like Nextcloud Social: no streaming, the table.
        await server.setVariant(.nextcloud)
        await fixture.add("alice-token", Self.alice)
        #expect(await sync.streamState(for: Self.alice) == .stopped)
        #expect(await sync.scheduler.plan(for: Self.alice)?.schedule == .every(.seconds(30)))

        // Upgraded to Mastodon: v2 with a streaming URL — the stream opens, polling slows to the safety net.
        await server.setVariant(.mastodon)
        let upgraded = try #require(try await sync.refreshCapabilities(account: Self.alice))
        #expect(upgraded.offersStreaming)
        #expect(await fixture.streamIs(Self.alice, .open))
        #expect(await eventually { await sync.scheduler.plan(for: Self.alice)?.schedule == .every(.seconds(300)) })

        // Back to a v1-only server without streaming: v2 is 404, v1 answers; the stream closes.
        await server.setVariant(.nextcloud)
        let v1Before = fixture.base.requests("/api/v1/instance")
        let v2Before = fixture.base.requests("/api/v2/instance")
        let downgraded = try #require(try await sync.refreshCapabilities(account: Self.alice))
        #expect(!downgraded.offersStreaming)
        #expect(fixture.base.requests("/api/v2/instance") == v2Before + 1)
        #expect(fixture.base.requests("/api/v1/instance") == v1Before + 1)
        #expect(await eventually { await sync.streamState(for: Self.alice) == .stopped })
        #expect(await eventually { await sync.scheduler.plan(for: Self.alice)?.schedule == .every(.seconds(30)) })
        await sync.shutdown()
    }
}
