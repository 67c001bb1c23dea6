import Foundation
import Testing
import TidingsCore
import TidingsNet
import TidingsSandbox

@testable import TidingsOpenMates

/// A client on a TestClock against the sandbox in process (through the kit's in-memory WebSocket pair).
final class OpenMatesClientHarness {
    let server: OpenMatesSandboxServer
    let endpoint: OpenMatesSandboxWebSocketServer
    let store: OpenMatesStore
    let clock = TestClock()
    let client: OpenMatesClient
    let changes: ChangeSubscription<OpenMatesClient.Change>
    private var iterator: ChangeSubscription<OpenMatesClient.Change>.AsyncIterator

    init(
        server: OpenMatesSandboxServer = OpenMatesSandboxServer(), store: OpenMatesStore? = nil,
        configuration: OpenMatesClient.Configuration = .init(
            reconnectBackoff: Backoff(base: .seconds(1), cap: .seconds(30), random: { 0.999_999 })),
        transport: (any OpenMatesTransport) -> any OpenMatesTransport = { $0 }
    ) throws {
        self.server = server
        endpoint = try OpenMatesSandboxWebSocketServer(server: server)
        self.store = try store ?? OpenMatesStore.inMemory()
        let base = endpoint.inProcessTransport(token: server.token)
        client = OpenMatesClient(
            configuration: configuration, transport: transport(base), store: self.store, clock: clock)
        changes = client.changes(bufferingLimit: 10_000)
        iterator = changes.makeAsyncIterator()
    }

    /// The model suites' client: reconnect backoff with fixed jitter (the longest delay, so a step of 31 s on
    /// the clock always reaches the attempt) and no app pings (their steps move the virtual clock without
    /// reading the client's changes, so a pong deadline would take the live sandbox for dead).
    static let modelConfiguration = OpenMatesClient.Configuration(
        reconnectBackoff: Backoff(base: .seconds(1), cap: .seconds(30), random: { 0.999_999 }),
        pingInterval: .seconds(1_000_000))

    deinit { endpoint.stop() }

    /// Waits for a sleeper on the clock and moves the clock to the earliest deadline: the reconnect delay after a
    /// second drop in a row grows (the healthy-connection rule), so a fixed step may fall short of it.
    @discardableResult
    func advanceToNextDeadline() async -> Bool {
        guard await clock.waitForSleepers(1), let next = clock.earliestPendingDeadline else { return false }
        await clock.advance(to: next)
        return true
    }

    /// Reads changes until one satisfies `predicate`; false when the stream ended first.
    @discardableResult
    func until(_ predicate: (OpenMatesClient.Change) -> Bool) async -> Bool {
        while let change = await iterator.next() {
            if predicate(change) { return true }
        }
        return false
    }

    /// Reads changes until the status satisfies `predicate`.
    @discardableResult
    func untilStatus(_ predicate: (OpenMatesSyncStatus) -> Bool) async -> Bool {
        await until { change in
            if case .status(let status) = change { return predicate(status) }
            return false
        }
    }

    /// Reads changes until the sync is complete now. A `.status(complete)` read from the stream may be one
    /// published before a reset (a later status change of a finished sync is buffered behind it), so each one
    /// is checked against the client's current status: after ``OpenMatesClient/resetLocalStore()`` that is
    /// pending until the new sync completes.
    func untilSynced() async -> Bool {
        while await untilStatus({ $0.sync == .complete }) {
            if await client.status.sync == .complete { return true }
        }
        return false
    }

    /// Lets `duration` of virtual time pass with a live server: in steps of 5 s, each app ping's pong handled
    /// before time goes on. A jump past a ping and its pong deadline in one go would leave the client no chance
    /// to read the pong (the server answered; the client had not run yet) and it would, rightly by its clock,
    /// take the connection for dead.
    func advanceAnsweringPings(by duration: Duration) async {
        var remaining = duration
        while remaining > .zero {
            let step = min(remaining, .seconds(5))
            await clock.advance(by: step)
            remaining -= step
            _ = await eventually {
                let traffic = await client.traffic
                return traffic.received["pong", default: 0] >= traffic.sent["ping", default: 0]
            }
        }
    }

    func received(_ type: String) async -> [OpenMatesEnvelope] { await server.received.filter { $0.type == type } }
    func sent(_ type: String) async -> [OpenMatesEnvelope] { await server.sent.filter { $0.type == type } }
}

/// Yields until `condition` holds; false after `maxYields` (no wall clock involved).
func eventually(maxYields: Int = 2_000_000, _ condition: () async throws -> Bool) async rethrows -> Bool {
    for _ in 0..<maxYields {
        if try await condition() { return true }
        // A test past its time limit is cancelled: stop here instead of spinning on.
        if Task.isCancelled { return false }
        await Task.yield()
    }
    return try await condition()
}

/// Wraps a transport; while `refusing` is set every connect fails, as an unreachable server does.
final class RefusableOpenMatesTransport: OpenMatesTransport, Sendable {
    private let base: any OpenMatesTransport
    private let state = LockedState((refusing: false, dropsAtOnce: false, attempts: 0))

    init(_ base: any OpenMatesTransport) { self.base = base }

    var refusing: Bool {
        get { state.withLock { $0.refusing } }
        set { state.withLock { $0.refusing = newValue } }
    }
    /// Whether a connection opens and is closed at once, as by a server that accepts and drops.
    var dropsAtOnce: Bool {
        get { state.withLock { $0.dropsAtOnce } }
        set { state.withLock { $0.dropsAtOnce = newValue } }
    }
    var attempts: Int { state.withLock { $0.attempts } }

    func connect() async throws -> OpenMatesChannel {
        let refuse = state.withLock { state -> Bool in
            state.attempts += 1
            return state.refusing
        }
        if refuse { throw OpenMatesError.connectionLost }
        let channel = try await base.connect()
        if dropsAtOnce { await channel.close() }
        return channel
    }
}
