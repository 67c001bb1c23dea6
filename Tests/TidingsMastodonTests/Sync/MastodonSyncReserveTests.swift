import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox
import TidingsSandboxKit

/// The last requests of the server's window (`X-RateLimit-Remaining` at the gate's reserve) are kept for what
/// the person does: the requests sync starts on its own — the stream's refresh after `update`, its notifications
/// poll, a timeline appearing, a push asking for notifications — wait for `X-RateLimit-Reset` like the ticks.
@Suite(.timeLimit(.minutes(1)))
struct MastodonSyncReserveTests {
    private static let alice = "alice@sandbox"
    private static let home = "/api/v1/timelines/home"

    /// A sync over a sandbox of 30 requests a window, on the sandbox's dates (so `X-RateLimit-Reset` means the
    /// same instant to the budget), alice's stream open and her window spent down to the reserve of 10.
    struct World {
        let base: EngineFixture
        let sync: MastodonSync
        let engine: MastodonAccountEngine

        init() async throws {
            var variant = MastodonSandboxVariant.mastodon
            variant.requestsPerWindow = 30
            base = try await EngineFixture(variant: variant)
            let clock = base.clock
            sync = MastodonSync(
                clock: clock, settings: MastodonPollSettings(preset: .manual),
                streamConnector: MastodonSandboxServer.inProcessStreamConnector(base.http),
                now: { EngineFixture.epoch.addingTimeInterval(Double(clock.now.offset.components.seconds)) },
                random: { 0.5 })
            await sync.appStateChanged(.activeAccount(MastodonSyncReserveTests.alice))
            engine = await sync.addAccount(
                client: MastodonAPIClient(
                    server: URL(string: "https://sandbox.invalid")!, accountKey: MastodonSyncReserveTests.alice,
                    authorization: MastodonAuthorization(token: "alice-token"),
                    transport: MastodonSandboxTransport(server: base.http)),
                store: base.store)
            let sync = sync
            #expect(await eventually { await sync.streamState(for: MastodonSyncReserveTests.alice) == .open })
            let budget = try #require(sync.rateBudget)
            let gate = PollBudgetGate(budget: budget, host: "sandbox.invalid", account: MastodonSyncReserveTests.alice)
            // The reader's own refreshes spend the window; the reserve is what they leave.
            var spent = 0
            while await gate.pause() == .zero, spent < 30 {
                try await engine.refresh()
                spent += 1
            }
            #expect(await gate.pause() > .seconds(200), "at the reserve until the window resets")
            #expect(base.clock.earliestPendingDeadline == nil, "nothing sleeps on the clock yet")
        }

        /// Waits until something sleeps on the clock, and returns how far off its deadline is.
        func nextSleep() async -> Duration? {
            let clock = base.clock
            guard await eventually({ clock.earliestPendingDeadline != nil }),
                let deadline = clock.earliestPendingDeadline
            else { return nil }
            return clock.now.duration(to: deadline)
        }
    }

    @Test func aStreamedUpdateWaitsForTheResetAtTheReserve() async throws {
        let world = try await World()
        let base = world.base
        let before = base.requests(Self.home)
        let id = await base.server.post(as: base.bob, "posted at the reserve")
        // The update starts the stream's coalescing window (3 s).
        #expect(await world.nextSleep() == MastodonUserStream.updateCoalescing)
        await base.clock.advance(by: MastodonUserStream.updateCoalescing)
        // Then the refresh waits for the reset instead of spending the reserve.
        let wait = try #require(await world.nextSleep(), "the refresh waits on the clock")
        #expect(wait > .seconds(200))
        #expect(base.requests(Self.home) == before)
        await base.clock.advance(by: wait)
        #expect(await eventually { base.requests(Self.home) == before + 1 })
        #expect(await eventually { (try? await world.engine.entries().last?.statusID) == ServerID(id) })
        await world.sync.shutdown()
    }

    @Test func aStreamedNotificationWaitsForTheResetAtTheReserve() async throws {
        let world = try await World()
        let base = world.base
        let before = base.requests("/api/v2/notifications")
        // From an account alice does not follow: a `notification` event and no `update`.
        let dave = await base.server.addAccount(username: "dave", token: "dave-token")
        await base.server.post(as: dave, "@alice at the reserve", mentioning: [base.alice])
        #expect(await world.nextSleep() == MastodonUserStream.notificationCoalescing)
        await base.clock.advance(by: MastodonUserStream.notificationCoalescing)
        let wait = try #require(await world.nextSleep())
        #expect(wait > .seconds(200))
        #expect(base.requests("/api/v2/notifications") == before)
        await base.clock.advance(by: wait)
        // The poll pages upward to the empty page above the new one: one or two requests, after the reset.
        #expect(await eventually { base.requests("/api/v2/notifications") > before })
        #expect(await eventually { (try? await world.engine.notificationGroups().count) == 1 })
        await world.sync.shutdown()
    }

    @Test func anAppearingTimelineAndARequestedNotificationsPollWaitForTheReset() async throws {
        let world = try await World()
        let base = world.base
        let sync = world.sync
        let home = base.requests(Self.home)
        let notifications = base.requests("/api/v2/notifications")
        let appeared = Task { try await sync.timelineAppeared("home", account: Self.alice) }
        let requested = Task { try await sync.scheduler.notificationsRequested(account: Self.alice) }
        #expect(await base.clock.waitForSleepers(2))
        let wait = try #require(await world.nextSleep())
        #expect(wait > .seconds(200))
        #expect(base.requests(Self.home) == home)
        #expect(base.requests("/api/v2/notifications") == notifications)
        await base.clock.advance(by: wait)
        #expect(try await appeared.value)
        #expect(try await requested.value)
        #expect(base.requests(Self.home) == home + 1)
        #expect(base.requests("/api/v2/notifications") == notifications + 1)
        await sync.shutdown()
    }

    @Test func theMaintenanceWindowsRecheckLeavesTheReserveAndRunsAfterTheReset() async throws {
        let world = try await World()
        let base = world.base
        let sync = world.sync
        // Something to re-check (one request of the reserve: still paused).
        await base.postMany(3)
        try await world.engine.refresh()
        let before = base.requests("/api/v1/statuses")
        // At the reserve: the sweep runs (local), the re-check is skipped and asks nothing.
        let atReserve = try await sync.maintenance()
        #expect(atReserve.recheckSkipped == [Self.alice])
        #expect(atReserve.rechecked[Self.alice] == nil)
        #expect(atReserve.swept[Self.alice] != nil)
        #expect(base.requests("/api/v1/statuses") == before)
        // After the window's reset the next maintenance window re-checks.
        let budget = try #require(sync.rateBudget)
        let gate = PollBudgetGate(budget: budget, host: "sandbox.invalid", account: Self.alice)
        await base.clock.advance(by: await gate.pause())
        #expect(await gate.pause() == .zero)
        let afterReset = try await sync.maintenance()
        #expect(afterReset.rechecked[Self.alice] == 0)
        #expect(base.requests("/api/v1/statuses") > before)
        await sync.shutdown()
    }
}
