import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsNet
import TidingsSandbox
import TidingsSandboxKit

/// The app-facing sync object against the in-process sandbox, on the virtual clock.
@Suite(.timeLimit(.minutes(1)))
struct MastodonSyncTests {
    /// A sandbox with alice and carol (both follow bob), one store, and a `MastodonSync` streaming in process.
    struct Fixture {
        let base: EngineFixture
        let sync: MastodonSync
        let carol: String

        /// Manual by default: no tick runs on its own, so the requests a test counts are its own.
        init(
            variant: MastodonSandboxVariant = .mastodon, preset: MastodonPollPreset = .manual,
            maintenance: MastodonMaintenancePolicy = .init()
        ) async throws {
            base = try await EngineFixture(variant: variant)
            carol = await base.server.addAccount(username: "carol", token: "carol-token")
            await base.server.follow(carol, base.bob)
            sync = MastodonSync(
                clock: base.clock, settings: MastodonPollSettings(preset: preset),
                streamConnector: MastodonSandboxServer.inProcessStreamConnector(base.http),
                maintenance: maintenance, random: { 0.5 })
        }

        func client(_ token: String, _ key: String) -> MastodonAPIClient {
            MastodonAPIClient(
                server: URL(string: "https://sandbox.invalid")!, accountKey: key,
                authorization: MastodonAuthorization(token: token),
                transport: MastodonSandboxTransport(server: base.http))
        }

        @discardableResult
        func add(_ token: String, _ key: String) async -> MastodonAccountEngine {
            await sync.addAccount(client: client(token, key), store: base.store)
        }

        func streamIs(_ key: String, _ expected: MastodonStreamState) async -> Bool {
            await eventually { await sync.streamState(for: key) == expected }
        }
    }

    @Test func onlyTheActiveAccountStreamsAndBackgroundClosesItAtOnce() async throws {
        let fixture = try await Fixture(preset: .normal)
        let sync = fixture.sync
        await sync.appStateChanged(.activeAccount("alice@sandbox"))
        await fixture.add("alice-token", "alice@sandbox")
        await fixture.add("carol-token", "carol@sandbox")
        #expect(await fixture.streamIs("alice@sandbox", .open))
        #expect(await sync.streamState(for: "carol@sandbox") == .stopped)
        // The scheduler was told the stream is open: the safety net (5 minutes) replaces the table.
        #expect(await eventually { await sync.scheduler.plan(for: "alice@sandbox")?.schedule == .every(.seconds(300)) })

        await sync.appStateChanged(.foreground(false))
        #expect(await sync.streamState(for: "alice@sandbox") == .stopped)

        await sync.appStateChanged(.foreground(true))
        await sync.appStateChanged(.activeAccount("carol@sandbox"))
        #expect(await fixture.streamIs("carol@sandbox", .open))
        let aliceState = await sync.streamState(for: "alice@sandbox")
        #expect(aliceState == .stopped)

        await sync.appStateChanged(.networkPath(.offline))
        #expect(await sync.streamState(for: "carol@sandbox") == .stopped)
        await sync.shutdown()
    }

    @Test func aServerWithoutStreamingIsPolledOnTheTable() async throws {
        let fixture = try await Fixture(variant: .nextcloud, preset: .normal)
        let sync = fixture.sync
        await sync.appStateChanged(.activeAccount("alice@sandbox"))
        let instanceRequests = fixture.base.requests("/api/v1/instance")
        await fixture.add("alice-token", "alice@sandbox")
        // The active account, interacting, on the table: every 30 s (a stream would make it 300 s).
        #expect(await sync.scheduler.plan(for: "alice@sandbox")?.schedule == .every(.seconds(30)))
        #expect(await sync.streamState(for: "alice@sandbox") == .stopped)
        // The capabilities were fetched once, v2 first then v1 (Nextcloud Social has no v2 instance).
        #expect(fixture.base.requests("/api/v1/instance") == instanceRequests + 1)
        await sync.shutdown()
    }

    @Test func changesOfEveryAccountArriveOnOneStream() async throws {
        let fixture = try await Fixture()
        let sync = fixture.sync
        let changes = sync.changes()
        let alice = await fixture.add("alice-token", "alice@sandbox")
        let carol = await fixture.add("carol-token", "carol@sandbox")
        await fixture.base.postMany(3)
        try await alice.refresh()
        try await carol.refresh()
        var seen: Set<String> = []
        for await change in changes {
            if case .engine(let account, .timeline(_, let inserted)) = change, inserted == 3 { seen.insert(account) }
            if seen.count == 2 { break }
        }
        #expect(seen == ["alice@sandbox", "carol@sandbox"])
        await sync.shutdown()
    }

    @Test func signOutStopsPollingAndStreaming() async throws {
        let fixture = try await Fixture()
        let sync = fixture.sync
        let changes = sync.changes()
        await sync.appStateChanged(.activeAccount("alice@sandbox"))
        await fixture.add("alice-token", "alice@sandbox")
        #expect(await fixture.streamIs("alice@sandbox", .open))
        await sync.signOut(account: "alice@sandbox")
        #expect(await sync.scheduler.pollLoop(for: "alice@sandbox") == nil)
        #expect(await sync.engine(for: "alice@sandbox") == nil)
        var signedOut = false
        for await change in changes {
            if change == .signedOut(account: "alice@sandbox") {
                signedOut = true
                break
            }
        }
        #expect(signedOut)
        await sync.shutdown()
    }

    @Test func aRefusedTokenWaitsForSignInThenPollsAgain() async throws {
        let fixture = try await Fixture()
        let sync = fixture.sync
        let engine = await sync.addAccount(
            client: fixture.client("wrong-token", "alice@sandbox"), store: fixture.base.store)
        await #expect(throws: MastodonError.self) { try await engine.refresh() }
        #expect(await sync.needsReauthentication("alice@sandbox"))
        await sync.signIn(account: "alice@sandbox", token: "alice-token")
        #expect(!(await sync.needsReauthentication("alice@sandbox")))
        await fixture.base.postMany(2)
        #expect(try await engine.refresh().inserted == 2)
        await sync.shutdown()
    }

    @Test func maintenanceSweepsToTheLimitsAndRechecksDeletionsOnItsCadence() async throws {
        var policy = MastodonMaintenancePolicy()
        policy.retention.homeEntries = 5
        policy.recheckLimit = 5
        let fixture = try await Fixture(maintenance: policy)
        let sync = fixture.sync
        let alice = await fixture.add("alice-token", "alice@sandbox")
        let ids = await fixture.base.postMany(8)
        try await alice.refresh()
        #expect(try await alice.entries().count == 8)
        // Deleted on the server while no stream told us.
        #expect(await fixture.base.server.delete(ids[7].rawValue))

        let first = try await sync.maintenance()
        #expect(first.swept["alice@sandbox"]?.entries == 3)
        #expect(first.rechecked["alice@sandbox"] == 1)
        #expect(try await fixture.base.cachedHome() == Array(ids[3..<7].reversed()))

        // Within the hour: no second re-check (no request), the sweep still runs.
        let before = fixture.base.log.entries.count
        let second = try await sync.maintenance()
        #expect(second.recheckSkipped == ["alice@sandbox"])
        #expect(fixture.base.log.entries.count == before)

        await fixture.base.clock.advance(by: .seconds(3600))
        let third = try await sync.maintenance()
        #expect(third.rechecked["alice@sandbox"] == 0)
        await sync.shutdown()
    }
}
