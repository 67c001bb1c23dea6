import Foundation
import Testing
import TidingsCore
import TidingsSandbox

@testable import TidingsOpenMates

/// Coming back from a lost connection on the app's word: `start()` after the terminal failure, and
/// `reconnectNow()` (the network changed) instead of the remaining backoff.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesReconnectRecoveryTests {
    private static func synced() async throws -> (OpenMatesClientHarness, RefusableOpenMatesTransport) {
        var transport: RefusableOpenMatesTransport?
        let server = OpenMatesSandboxServer()
        await server.seed(parents: 3)
        let harness = try OpenMatesClientHarness(
            server: server,
            transport: { base in
                let refusable = RefusableOpenMatesTransport(base)
                transport = refusable
                return refusable
            })
        await harness.client.start()
        #expect(await harness.untilSynced())
        return (harness, try #require(transport))
    }

    /// Lets `attempts` reconnect attempts fail on the clock (the transport refuses them).
    private static func fail(
        _ attempts: Int, _ harness: OpenMatesClientHarness, _ transport: RefusableOpenMatesTransport
    ) async {
        transport.refusing = true
        await harness.server.dropAllConnections()
        #expect(await harness.untilStatus { $0.connectionStatus == .reconnecting(attempt: 1) })
        for attempt in 1...attempts {
            #expect(await harness.clock.waitForSleepers(1))
            await harness.clock.run(maxSteps: 1)
            let next: OpenMatesSyncStatus.Connection = attempt < 10 ? .reconnecting(attempt: attempt + 1) : .failed
            #expect(await harness.untilStatus { $0.connectionStatus == next })
        }
    }

    @Test func startAfterTheTerminalFailureConnectsAgainAndSyncs() async throws {
        let (harness, transport) = try await Self.synced()
        await Self.fail(10, harness, transport)
        #expect(await harness.client.status.connectionStatus == .failed)
        #expect(transport.attempts == 11)

        transport.refusing = false
        await harness.client.start()
        try #require(await harness.client.status.connectionStatus == .connecting)
        var seen: [OpenMatesSyncStatus.Connection] = []
        #expect(
            await harness.untilStatus { status in
                if seen.last != status.connectionStatus { seen.append(status.connectionStatus) }
                return status.connectionStatus == .connected && status.sync == .complete
            })
        #expect(seen.first == .connecting)
        #expect(seen.contains(.connected))
        #expect(await harness.client.status.offlineBanner == false)
        #expect(transport.attempts == 12)
        let requests = await harness.received("phased_sync_request")
        #expect(requests.count == 2)
        #expect(requests.last?.payload["phase"] == "all")
        // The restart is a new run: a second call while it runs changes nothing.
        await harness.client.start()
        #expect(await harness.server.connectionsAccepted == 2)
        await harness.client.close()
    }

    @Test func reconnectNowSkipsTheRemainingBackoffAndTheOldAttemptNeverComes() async throws {
        let (harness, transport) = try await Self.synced()
        await Self.fail(3, harness, transport)
        // Attempt 4 waits its delay (7 s with this jitter).
        #expect(await harness.clock.waitForSleepers(1))
        transport.refusing = false
        let before = harness.clock.now
        await harness.client.reconnectNow()
        // The statuses of the outage still say the last sync's "complete": wait for the new connection's.
        #expect(await harness.untilStatus { $0.connectionStatus == .connected && $0.sync == .complete })
        #expect(harness.clock.now == before)
        #expect(transport.attempts == 5)
        #expect(await harness.received("phased_sync_request").count == 2)
        // The replaced attempt's delay passing opens nothing more.
        await harness.advanceAnsweringPings(by: .seconds(60))
        #expect(transport.attempts == 5)
        #expect(await harness.server.connectionsAccepted == 2)
        // Connected: nothing to skip.
        await harness.client.reconnectNow()
        #expect(await harness.server.connectionsAccepted == 2)
        #expect(await harness.client.status.connectionStatus == .connected)
        await harness.client.close()
    }

    @Test func reconnectNowAfterTheTerminalFailureStartsAgainAndNothingAfterClose() async throws {
        let (harness, transport) = try await Self.synced()
        await Self.fail(10, harness, transport)
        transport.refusing = false
        await harness.client.reconnectNow()
        #expect(await harness.untilStatus { $0.connectionStatus == .connected && $0.sync == .complete })
        #expect(transport.attempts == 12)
        await harness.client.close()
        await harness.client.reconnectNow()
        await harness.client.start()
        #expect(await harness.client.status.connectionStatus == .disconnected)
        #expect(transport.attempts == 12)
    }
}
