import Foundation
import Testing
import TidingsCore
import TidingsNet
import TidingsSandbox

@testable import TidingsOpenMates

/// A server that accepts and drops at once is retried at a growing delay (the healthy-connection rule every
/// reconnecting client shares), not every second; a connection that proved healthy starts the delays over.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesReconnectHealthTests {
    private static func harness() throws -> (OpenMatesClientHarness, RefusableOpenMatesTransport) {
        var transport: RefusableOpenMatesTransport?
        let harness = try OpenMatesClientHarness(
            configuration: OpenMatesClientHarness.modelConfiguration,
            transport: { base in
                let dropping = RefusableOpenMatesTransport(base)
                transport = dropping
                return dropping
            })
        return (harness, try #require(transport))
    }

    /// Steps the clock from reconnect delay to reconnect delay until `duration` has passed; the delays waited, in
    /// order. Each step waits until the client is reconnecting again with its delay on the clock (the dropped
    /// connection's ping task may sleep meanwhile, far in the future).
    private static func drive(
        _ harness: OpenMatesClientHarness, _ transport: RefusableOpenMatesTransport, for duration: Duration
    ) async -> [Duration] {
        let end = harness.clock.now.advanced(by: duration)
        var delays: [Duration] = []
        while harness.clock.now < end {
            guard await reconnectDelayPending(harness), let next = harness.clock.earliestPendingDeadline else { break }
            let attempts = transport.attempts
            delays.append(harness.clock.now.duration(to: next))
            await harness.clock.advance(to: next)
            guard await eventually({ transport.attempts > attempts }) else { break }
        }
        return delays
    }

    /// Whether the client comes to wait a reconnect delay (a deadline within a minute) while reconnecting.
    private static func reconnectDelayPending(_ harness: OpenMatesClientHarness) async -> Bool {
        await eventually {
            guard case .reconnecting = await harness.client.status.connectionStatus,
                let next = harness.clock.earliestPendingDeadline
            else { return false }
            return harness.clock.now.duration(to: next) <= .seconds(60)
        }
    }

    @Test func aServerThatAcceptsAndDropsAtOnceIsRetriedAtAGrowingDelay() async throws {
        let (harness, transport) = try Self.harness()
        await harness.server.seed(parents: 2)
        transport.dropsAtOnce = true
        await harness.client.start()
        let delays = await Self.drive(harness, transport, for: .seconds(600))
        // 1, 2, 4, 8, 16 s, then the 30 s cap: about 24 connections in ten minutes, where a backoff started over
        // after each drop made about 600.
        let seconds = delays.prefix(7).map { Int($0.components.seconds) }
        #expect(seconds == [0, 1, 3, 7, 15, 29, 29])
        #expect(transport.attempts <= 26)
        #expect(transport.attempts >= 20)
        await harness.client.close()
    }

    @Test func aConnectionThatStayedUpThirtySecondsStartsTheDelaysOver() async throws {
        let (harness, transport) = try Self.harness()
        await harness.server.seed(parents: 2)
        transport.dropsAtOnce = true
        await harness.client.start()
        _ = await Self.drive(harness, transport, for: .seconds(20))
        #expect(transport.attempts >= 4)
        // The server is well again: a connection that lasts 30 s on the clock.
        transport.dropsAtOnce = false
        #expect(await Self.reconnectDelayPending(harness))
        await harness.clock.advance(to: try #require(harness.clock.earliestPendingDeadline))
        #expect(await eventually { await harness.client.status.connectionStatus == .connected })
        await harness.clock.advance(by: .seconds(31))
        await harness.server.dropAllConnections()
        #expect(await eventually { await harness.client.status.connectionStatus == .reconnecting(attempt: 1) })
        #expect(await harness.clock.waitForSleepers(1))
        let next = try #require(harness.clock.earliestPendingDeadline)
        #expect(harness.clock.now.duration(to: next) < .seconds(1))
        await harness.client.close()
    }

    @Test func theHealthRuleCountsAttemptsUntilAConnectionLastsItsThreshold() {
        var health = ReconnectHealth(healthyAfter: .seconds(30))
        health.attemptMade()
        health.connectionEnded(after: .seconds(2))
        health.attemptMade()
        #expect(health.attemptsSinceHealthy == 2)
        health.connectionEnded(after: .seconds(30))
        #expect(health.attemptsSinceHealthy == 0)
        health.attemptMade()
        health.reset()
        #expect(health.attemptsSinceHealthy == 0)
        var backoff = Backoff(base: .seconds(1), cap: .seconds(30), random: { 0.5 })
        backoff.resume(afterFailures: 3)
        #expect(backoff.nextDelay() == .seconds(4))
    }
}
