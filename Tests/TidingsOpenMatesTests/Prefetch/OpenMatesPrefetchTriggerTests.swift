import Foundation
import Testing
import TidingsCore
import TidingsSandbox

@testable import TidingsOpenMates

/// Attached to a client, prefetch starts after a completed phased sync, again after a reconnect (the network
/// came back) and after the offline-action queue has drained (a replay).
@Suite(.timeLimit(.minutes(1))) struct OpenMatesPrefetchTriggerTests {
    @Test func itStartsAfterSyncAgainAfterAReconnectAndAfterAReplay() async throws {
        let server = await seededServer(parents: 16)
        let client = try OpenMatesClientHarness(server: server)
        let harness = try PrefetchHarness(server: server, store: client.store, clock: client.clock)
        await harness.prefetcher.attach(to: client.client)
        // Attached but never started, with the conditions allowing it: nothing goes out before a sync…
        await harness.clock.advance(by: .seconds(10))
        #expect(harness.endpoint.log.entries.isEmpty)
        await client.client.start()
        #expect(await client.untilSynced())
        // …the completed phased sync does.
        #expect(await harness.drive { await harness.state() == .finished })
        #expect(harness.servedCursors() == [10, 13])

        // The network drops and comes back: the reconnect's phased sync completes and a new pass runs.
        await server.dropAllConnections()
        #expect(await client.untilStatus { if case .reconnecting = $0.connectionStatus { true } else { false } })
        #expect(await harness.drive { harness.endpoint.served.count == 4 })
        #expect(harness.servedCursors() == [10, 13, 10, 13])
        #expect(await harness.drive { await harness.state() == .finished })

        // An action queued and replayed: once the queue is empty, another pass.
        // Driven on the clock: `drive` may have moved it past a pong deadline the client had not read in time (a
        // loaded machine), and the reconnect that follows waits its delay on the clock.
        // A pin succeeds by the pong to the ping sent after it: the clock moves on only once every ping sent has
        // its pong read, or a jump to the action's deadline would fail tries the server had answered.
        try await client.client.setPinned(true, chatID: chatID(0))
        #expect(
            try await harness.drive {
                _ = await eventually(maxYields: 100_000) {
                    let traffic = await client.client.traffic
                    return traffic.received["pong", default: 0] >= traffic.sent["ping", default: 0]
                }
                return try client.store.count(.pendingActions) == 0
            })
        #expect(try await client.client.failedActions().isEmpty)
        #expect(await harness.drive { harness.endpoint.served.count == 6 })
        await client.client.close()
        await harness.prefetcher.stop()
    }
}
