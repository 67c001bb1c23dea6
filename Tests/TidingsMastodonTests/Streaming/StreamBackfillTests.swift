import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsNet
import TidingsSandbox
import TidingsSandboxKit

/// The user stream's reconnect backfill after an outage of more than a page, on the virtual clock: it loads
/// the gap on top until it closes (or the feed cap marks the rest unfillable), each page within the gate.
@Suite(.timeLimit(.minutes(1)))
struct StreamBackfillTests {
    /// Opens a stream over scripted connections, drops it, and returns it waiting to reconnect.
    static func dropped(
        _ fixture: EngineFixture, engine: MastodonAccountEngine, gate: PollBudgetGate? = nil
    ) async -> (MastodonUserStream, ChangeSubscription<MastodonStreamState>.AsyncIterator) {
        let script = UserStreamTests.ScriptedConnector()
        let first = UserStreamTests.ScriptedConnection()
        script.queue(first)
        script.queue(UserStreamTests.ScriptedConnection())
        let stream = MastodonUserStream(
            engine: engine, connector: script.connector, clock: fixture.clock,
            backoff: Backoff(base: .seconds(1), cap: .seconds(60), random: { 0.5 }), gate: gate)
        var states = stream.stateChanges().makeAsyncIterator()
        await stream.start()
        _ = await UserStreamTests.next(&states) { $0 == .open }
        first.continuation.finish(throwing: WebSocketError.connectionLost)
        _ = await UserStreamTests.next(&states) { if case .waiting = $0 { true } else { false } }
        await fixture.clock.waitForSleepers(1)
        return (stream, states)
    }

    /// Drops the stream, lets `whileDown` run on the server, and waits for the reconnect to be open.
    static func outage(_ fixture: EngineFixture, whileDown: () async -> Void) async -> MastodonUserStream {
        var (stream, states) = await dropped(fixture, engine: fixture.engine)
        await whileDown()
        await fixture.clock.advance(by: .seconds(60))
        _ = await UserStreamTests.next(&states) { $0 == .open }
        return stream
    }

    @Test func anOutageOfSeveralPagesIsBackfilledToTheTopWithoutAGap() async throws {
        let fixture = try await EngineFixture(pageLimit: 10)
        let before = await fixture.postMany(5)
        try await fixture.engine.refresh()
        var missed: [ServerID] = []
        let stream = await Self.outage(fixture) { missed = await fixture.postMany(35, content: "missed") }
        // Open only after the backfill: everything missed is cached, in order, with no gap and no duplicate.
        let entries = try await fixture.engine.entries()
        #expect(entries.allSatisfy { !$0.isGap })
        #expect(try await fixture.cachedHome() == (before + missed).reversed())
        #expect(await fixture.engine.hasTimelineBacklog("home") == false)
        await stream.stop()
    }

    @Test func anOutageBeyondTheFeedCapEndsInAnUnfillableGapNotAnOpenOne() async throws {
        var variant = MastodonSandboxVariant.mastodon
        variant.feedCap = 20
        let fixture = try await EngineFixture(variant: variant, pageLimit: 10)
        let before = await fixture.postMany(5)
        try await fixture.engine.refresh()
        var missed: [ServerID] = []
        let stream = await Self.outage(fixture) { missed = await fixture.postMany(40, content: "missed") }
        let entries = try await fixture.engine.entries()
        // The feed's 20 newest on top, nothing open; what fell out of the feed is an unfillable gap above the
        // statuses cached before the outage.
        #expect(!entries.contains { $0.content == .gap(.open) })
        #expect(entries.filter { $0.content == .gap(.unfillable) }.count == 1)
        #expect(Array(try await fixture.cachedHome().prefix(20)) == Array(missed.suffix(20).reversed()))
        #expect(Array(try await fixture.cachedHome().suffix(5)) == before.reversed())
        await stream.stop()
    }

    @Test func theBackfillsPagesWaitForTheGateAtTheServersReserve() async throws {
        // 20 requests a window, a reserve of 10: the backfill's pages stop at the reserve and go on after the
        // window's reset, without a 429.
        var variant = MastodonSandboxVariant.mastodon
        variant.requestsPerWindow = 20
        let fixture = try await EngineFixture(variant: variant, pageLimit: 5)
        let clock = fixture.clock
        let (engine, budget) = try await fixture.budgetedEngine(pageLimit: 5)
        let gate = PollBudgetGate(budget: budget, host: "sandbox.invalid", account: "alice@sandbox")
        await fixture.postMany(2)
        try await engine.refresh()
        let (stream, _) = await Self.dropped(fixture, engine: engine, gate: gate)
        let missed = await fixture.postMany(60, content: "missed")
        let reconnectAt = clock.now
        await clock.advance(by: .seconds(60))
        // The backfill reads pages until the reserve, then sleeps on the clock until the window resets: the test
        // moves the clock from deadline to deadline until the stream is open.
        var opened = false
        for _ in 0..<60 where !opened {
            _ = await eventually { await stream.state == .open || clock.earliestPendingDeadline != nil }
            if await stream.state == .open {
                opened = true
            } else if let deadline = clock.earliestPendingDeadline {
                await clock.advance(to: deadline)
            }
        }
        #expect(opened)
        #expect(reconnectAt.duration(to: clock.now) >= .seconds(200), "it waited for the window's reset")
        let home = try await engine.entries().reversed().compactMap(\.statusID)
        #expect(Array(home.prefix(60)) == missed.reversed())
        #expect(try await engine.entries().allSatisfy { !$0.isGap })
        #expect(!fixture.log.entries.contains { $0.status == 429 })
        await stream.stop()
    }
}
