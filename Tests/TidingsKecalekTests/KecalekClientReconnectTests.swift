import Foundation
import Testing
import TidingsCore
import TidingsKecalek
import TidingsSandbox

/// The reconnect loop survives a connection that is lost again right after it opened.
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

    @Test func reconnectDelaysDoubleUpToTheCapWithoutOverflowing() {
        let standard = KecalekClient.Configuration(userID: "alice")
        #expect((0...6).map(standard.reconnectDelay(afterFailures:)) == [1, 2, 4, 8, 16, 30, 30].map(Duration.seconds))
        #expect(standard.reconnectDelay(afterFailures: .max) == .seconds(30))
        // Near the top of Duration's range, doubling the delay would overflow; the cap applies first.
        let huge = Duration.seconds(Int64.max) * 18
        let uncapped = KecalekClient.Configuration(
            userID: "alice", initialReconnectDelay: .seconds(Int64.max) * 10, maximumReconnectDelay: huge)
        #expect(uncapped.reconnectDelay(afterFailures: 0) == .seconds(Int64.max) * 10)
        #expect(uncapped.reconnectDelay(afterFailures: 1) == huge)
        #expect(uncapped.reconnectDelay(afterFailures: 16) == huge)
    }
}

/// A transport whose listed attempts (1-based) open a connection that has already ended.
private final class FlakyTransport: KecalekTransport, Sendable {
    private struct State {
        var _base: (any KecalekTransport)?
        var _attempts = 0
    }
    private let state = LockedState(State())
    private let deadOnAttempts: Set<Int>

    init(deadOnAttempts: Set<Int>) { self.deadOnAttempts = deadOnAttempts }

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
        guard let base else { throw KecalekError.notConnected }
        guard deadOnAttempts.contains(attempt) else { return try await base.connect() }
        let (inbound, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        continuation.finish()
        return KecalekChannel(
            inbound: inbound, send: { _ in throw KecalekError.connectionLost }, close: {})
    }
}
