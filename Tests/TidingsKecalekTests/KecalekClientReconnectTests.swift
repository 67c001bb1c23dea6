import Foundation
import Testing
import TidingsCore
import TidingsKecalek
import TidingsSandbox

/// The reconnect loop survives a connection that is lost again right after it opened, and waits the
/// configured backoff between attempts.
@Suite(.timeLimit(.minutes(1))) struct KecalekClientReconnectTests {
    @Test func aConnectionLostRightAfterAReconnectStartsAnotherReconnect() async throws {
        let flaky = FlakyTransport(deadOnAttempts: [2])
        let harness = try await KecalekHarness(
            seeded: 1,
            transport: { server in
                flaky.base = server.transport(userID: KecalekHarness.me)
                return flaky
            })
        await harness.server.dropAllConnections()
        #expect(await eventually { await harness.client.connectionState == .connecting })
        // Attempt 2 opens a connection that is gone at once; the client must try again (attempt 3).
        #expect(await harness.clock.waitForSleepers(1))
        await harness.clock.advance(by: .seconds(1))
        #expect(await eventually { flaky.attempts == 2 })
        #expect(await harness.clock.waitForSleepers(1))
        await harness.clock.advance(by: .seconds(1))
        #expect(await eventually { await harness.client.connectionState == .connected && flaky.attempts == 3 })
        #expect(await harness.client.connectionState == .connected)
        await harness.client.close()
    }

    @Test func reconnectAttemptsWaitTheConfiguredBackoff() async throws {
        // Jitter fixed at half the ceiling: ceilings 4, 8, 16→10 s give delays of 2, 4 and 5 s.
        let flaky = FlakyTransport(deadOnAttempts: [], refusedAttempts: [2, 3])
        let harness = try await KecalekHarness(
            seeded: 1, reconnectBackoff: Backoff(base: .seconds(4), cap: .seconds(10), random: { 0.5 }),
            transport: { server in
                flaky.base = server.transport(userID: KecalekHarness.me)
                return flaky
            })
        await harness.server.dropAllConnections()
        for (delay, attempt) in [(2, 2), (4, 3), (5, 4)] {
            #expect(await harness.clock.waitForSleepers(1))
            await harness.clock.advance(by: .seconds(delay) - .milliseconds(1))
            #expect(flaky.attempts == attempt - 1, "attempt \(attempt) before its \(delay) s delay")
            await harness.clock.advance(by: .milliseconds(1))
            // The attempt runs on the client's queue, which a loaded machine may leave waiting for a while.
            #expect(await eventually(maxYields: 1_000_000) { flaky.attempts == attempt }, "attempt \(attempt)")
        }
        #expect(await eventually { await harness.client.connectionState == .connected })
        await harness.client.close()
    }
}

/// A transport whose listed attempts (1-based) open a connection that has already ended, or fail to connect.
private final class FlakyTransport: KecalekTransport, Sendable {
    private struct State {
        var _base: (any KecalekTransport)?
        var _attempts = 0
    }
    private let state = LockedState(State())
    private let deadOnAttempts: Set<Int>
    private let refusedAttempts: Set<Int>

    init(deadOnAttempts: Set<Int>, refusedAttempts: Set<Int> = []) {
        self.deadOnAttempts = deadOnAttempts
        self.refusedAttempts = refusedAttempts
    }

    var base: (any KecalekTransport)? {
        get { state.withLock { locked in locked._base } }
        set { state.withLock { locked in locked._base = newValue } }
    }

    var attempts: Int { state.withLock { locked in locked._attempts } }

    func connect() async throws -> KecalekChannel {
        let (attempt, base) = state.withLock { locked in
            locked._attempts += 1
            return (locked._attempts, locked._base)
        }
        guard let base, !refusedAttempts.contains(attempt) else { throw KecalekError.notConnected }
        guard deadOnAttempts.contains(attempt) else { return try await base.connect() }
        let (inbound, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        continuation.finish()
        return KecalekChannel(
            inbound: inbound, send: { _ in throw KecalekError.connectionLost }, close: {})
    }
}
