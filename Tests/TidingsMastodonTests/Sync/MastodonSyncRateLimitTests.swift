import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox
import TidingsSandboxKit

/// `MastodonSync` paces every account by default: the clients it is given get its budget, and accounts on one
/// host share that host's politeness bucket.
@Suite(.timeLimit(.minutes(1)))
struct MastodonSyncRateLimitTests {
    static let epoch = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func protectionIsOnByDefaultAndCanBeTurnedOff() async throws {
        let base = try await EngineFixture()
        let client = MastodonAPIClient(
            server: URL(string: "https://sandbox.invalid")!, accountKey: "alice@sandbox",
            authorization: MastodonAuthorization(token: "alice-token"),
            transport: MastodonSandboxTransport(server: base.http))
        #expect(client.rateBudget == nil)

        let sync = MastodonSync(clock: base.clock, settings: MastodonPollSettings(preset: .manual))
        let budget = try #require(sync.rateBudget)
        let before = base.log.entries.count
        let engine = await sync.addAccount(client: client, store: base.store)
        #expect(engine.client.rateBudget === budget)
        // The account's requests went through it: the host's bucket spent what the server saw.
        let spent = base.log.entries.count - before
        #expect(spent > 0)
        let status = await budget.status(host: "sandbox.invalid")
        #expect(abs(status.availableTokens - Double(300 - spent)) < 0.001)
        await sync.shutdown()

        let unpaced = MastodonSync(
            clock: base.clock, settings: MastodonPollSettings(preset: .manual), rateLimiting: .disabled)
        #expect(unpaced.rateBudget == nil)
        let raw = await unpaced.addAccount(client: client, store: base.store)
        #expect(raw.client.rateBudget == nil)
        await unpaced.shutdown()
    }

    @Test func fiveAccountsOnOneHostShareOnePolitenessBudget() async throws {
        let fixture = await MastodonSandboxFixture()
        let clock = fixture.clock
        let transport = RecordingTransport(MastodonSandboxTransport(server: fixture.http), clock: clock)
        let store = MastodonTimelineStore(
            database: try SQLiteDatabase.inMemory(schema: MastodonTimelineSchema.schema), now: fixture.now)
        // 6 requests at once and one every 50 s after that, per host, and per account alone: five accounts
        // paced only per account could send five times as much.
        let limits = RateBudget.Configuration(requestsPerWindow: 6, window: .seconds(300))
        let sync = MastodonSync(
            clock: clock, settings: MastodonPollSettings(preset: .frequent), rateLimiting: .automatic(limits),
            now: fixture.now, random: { 0.5 })
        await sync.appStateChanged(.activeAccount(nil))
        let names = ["alice", "carol", "dave", "erin", "frank"]
        for name in names.dropFirst() { await fixture.server.addAccount(username: name, token: "\(name)-token") }
        let added = LockedState(false)
        let adding = Task {
            for name in names {
                let client = MastodonAPIClient(
                    server: URL(string: "https://sandbox.invalid")!, accountKey: "\(name)@sandbox.invalid",
                    authorization: MastodonAuthorization(token: "\(name)-token"), transport: transport,
                    now: fixture.now)
                await sync.addAccount(client: client, store: store)
            }
            added.withLock { $0 = true }
        }
        // Signing in spends requests too (instance, filters, markers): the clock moves while they wait.
        var attempt = 0
        while !added.withLock({ $0 }) && attempt < 200_000 {
            if let deadline = clock.earliestPendingDeadline {
                await clock.advance(to: deadline)
            } else {
                await PollLoopDriver.pause(after: attempt)
            }
            attempt += 1
        }
        await adding.value
        var loops: [PollLoop] = []
        for name in names { loops.append(try #require(await sync.scheduler.pollLoop(for: "\(name)@sandbox.invalid"))) }
        await PollLoopDriver.run(loops, clock: clock, until: clock.now.advanced(by: .seconds(3600)))

        let log = transport.log
        let elapsed = clock.now.offset.components.seconds
        #expect(log.count <= 6 + Int(elapsed / 50) + 1, "\(log.count) requests in \(elapsed) s")
        #expect(log.count >= 50, "\(log.count)")
        #expect(Set(log.map(\.account)).count == 5, "every account still polls")
        #expect(log.allSatisfy { $0.status == 200 })
        await sync.shutdown()
    }
}
