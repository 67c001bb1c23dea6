import Foundation
import PeerSupport
import TidingsCore
import TidingsKecalek
import TidingsSandbox

/// A sandbox server, a client of `alice` over the in-process transport, a memory cache and a virtual clock.
struct KecalekHarness {
    let clock = TestClock()
    let server: KecalekSandboxServer
    let cache: any KecalekMessageCache
    let client: KecalekClient
    let recorder: ChangeRecorder
    let logs: LogCollector

    /// The client's default 1–30 s reconnect backoff with its jitter pinned to the ceiling (1, 2, 4, … s), so
    /// a test that advances the virtual clock sees the same schedule every run.
    static let reproducibleBackoff = Backoff(base: .seconds(1), cap: .seconds(30), random: { 1 })

    static let me = "alice"
    static let other = "bob"
    static let conversation = "general"

    /// - Parameters:
    ///   - seeded: messages already on the server in ``conversation``, alternating bob and alice.
    ///   - reconnects: whether the client reconnects on its own.
    init(
        seeded: Int = 0, reconnects: Bool = true, reconnectWait: Duration = .seconds(10),
        reconnectBackoff: Backoff = KecalekHarness.reproducibleBackoff,
        cache: (any KecalekMessageCache)? = nil, transport: ((KecalekSandboxServer) -> any KecalekTransport)? = nil
    ) async throws {
        server = KecalekSandboxServer(clock: clock)
        await server.createConversation(Self.conversation, members: [Self.me, Self.other, "carol"])
        await server.createConversation("random", members: [Self.me, Self.other])
        if seeded > 0 {
            try await server.seed(conversation: Self.conversation, from: [Self.other, Self.me], count: seeded)
        }
        let cache = cache ?? KecalekMemoryCache()
        self.cache = cache
        let logs = LogCollector()
        self.logs = logs
        client = KecalekClient(
            configuration: .init(
                userID: Self.me, reconnectWait: reconnectWait, reconnects: reconnects,
                reconnectBackoff: reconnectBackoff),
            transport: transport?(server) ?? server.transport(userID: Self.me), cache: cache, decryptor: server.cipher,
            clock: clock, logger: TidingsLogger(subsystem: "test", minimumLevel: .debug) { logs.append($0) })
        // Subscribed before connecting, so the recorder sees every change; a large buffer, since it must
        // never read a lag marker in place of what a test asserts.
        recorder = ChangeRecorder(client.changes(bufferingLimit: 100_000))
        try await client.connect()
    }

    /// The app starting again over the same cache: a new client of `alice` on the same server and clock,
    /// connected, with no conversation open yet; through `transport` (a test double wrapping the server's)
    /// when given, else straight to the server.
    ///
    /// Close ``client`` first and change the server in between: a client that stays connected is told
    /// about new messages by `new_message` and may store them before the next ``KecalekClient/messages(conversation:limit:offset:)``,
    /// so a test of what the reopen fetches would depend on scheduling.
    func relaunch(through transport: (any KecalekTransport)? = nil) async throws -> KecalekClient {
        let relaunched = KecalekClient(
            configuration: .init(userID: Self.me), transport: transport ?? server.transport(userID: Self.me),
            cache: cache, decryptor: server.cipher, clock: clock)
        try await relaunched.connect()
        return relaunched
    }

    /// The request log of the server since the last call, as `type since?` lines.
    func takeLog() async -> [KecalekSandboxServer.LoggedRequest] {
        let log = await server.requestLog
        await server.clearLog()
        return log
    }
}

/// Collects a client's changes in the background.
final class ChangeRecorder: Sendable {
    private struct State {
        var changes: [KecalekChange] = []
        var waiters: [(predicate: @Sendable (KecalekChange) -> Bool, continuation: CheckedContinuation<Void, Never>)] =
            []
        var task: Task<Void, Never>?
    }
    private let state = LockedState(State())

    init(_ stream: KecalekChanges) {
        let task = Task { [weak self] in
            for await change in stream { self?.append(change) }
        }
        state.withLock { locked in locked.task = task }
    }

    deinit { state.withLock { locked in locked.task }?.cancel() }

    private func append(_ change: KecalekChange) {
        let ready: [CheckedContinuation<Void, Never>] = state.withLock { locked in
            locked.changes.append(change)
            let (hit, rest) = (
                locked.waiters.filter { $0.predicate(change) }, locked.waiters.filter { !$0.predicate(change) }
            )
            locked.waiters = rest
            return hit.map(\.continuation)
        }
        for continuation in ready { continuation.resume() }
    }

    var all: [KecalekChange] { state.withLock { locked in locked.changes } }

    func contains(where predicate: (KecalekChange) -> Bool) -> Bool {
        state.withLock { locked in locked.changes.contains(where: predicate) }
    }

    /// Suspends until a change matching `predicate` is recorded (at once if one already was).
    func wait(for predicate: @escaping @Sendable (KecalekChange) -> Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let seen = state.withLock { locked in
                if locked.changes.contains(where: predicate) { return true }
                locked.waiters.append((predicate, continuation))
                return false
            }
            if seen { continuation.resume() }
        }
    }
}

/// Yields to other tasks until `condition` holds; false after `maxYields` (no wall clock involved).
///
/// The client works on its own queue, not on the pool these yields run on, so on a loaded machine it may
/// get no CPU during thousands of yields: the bound is high (a yield costs about a microsecond), so that
/// only a condition that never comes makes it return false, and the suites' time limits bound the rest.
func eventually(maxYields: Int = 2_000_000, _ condition: () async throws -> Bool) async rethrows -> Bool {
    for _ in 0..<maxYields {
        if try await condition() { return true }
        await Task.yield()
    }
    return try await condition()
}

extension KecalekMessagePage.Source {
    var isIncremental: Bool { if case .incremental = self { true } else { false } }
    var isFull: Bool { if case .full = self { true } else { false } }
    var cacheError: KecalekError? { if case .cache(let error) = self { error } else { nil } }
    var unavailableError: KecalekError? { if case .unavailable(let error) = self { error } else { nil } }
}

/// A transport that can be told to refuse connections, as an unreachable server would.
final class RefusableTransport: KecalekTransport, Sendable {
    private struct State {
        var base: (any KecalekTransport)?
        var refusing = false
    }
    private let state = LockedState(State())

    var base: (any KecalekTransport)? {
        get { state.withLock { locked in locked.base } }
        set { state.withLock { locked in locked.base = newValue } }
    }

    var refusing: Bool {
        get { state.withLock { locked in locked.refusing } }
        set { state.withLock { locked in locked.refusing = newValue } }
    }

    func connect() async throws -> KecalekChannel {
        guard !refusing, let base else { throw KecalekError.notConnected }
        return try await base.connect()
    }
}
