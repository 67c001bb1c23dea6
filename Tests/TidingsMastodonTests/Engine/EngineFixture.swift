import Foundation
import TidingsCore
import TidingsMastodon
import TidingsNet
import TidingsSandbox
import TidingsSandboxKit

/// An in-process sandbox (alice follows bob), its faults and request log, a store and alice's engine.
struct EngineFixture {
    static let epoch = Date(timeIntervalSince1970: 1_700_000_000)
    let clock = TestClock()
    let server: MastodonSandboxServer
    let faults = SandboxFaultSwitch()
    let log = SandboxRequestLog()
    let http: SandboxHTTPServer
    let alice: String
    let bob: String
    let store: MastodonTimelineStore
    let engine: MastodonAccountEngine

    init(
        variant: MastodonSandboxVariant = .mastodon, pageLimit: Int = 40, database: SQLiteDatabase? = nil,
        knowCapabilities: Bool = true
    ) async throws {
        let clock = clock
        let now: @Sendable () -> Date = { Self.epoch.addingTimeInterval(Double(clock.now.offset.components.seconds)) }
        server = MastodonSandboxServer(variant: variant, now: now)
        http = server.httpServer(faults: faults, log: log, clock: clock)
        alice = await server.addAccount(username: "alice", token: "alice-token")
        bob = await server.addAccount(username: "bob", token: "bob-token")
        await server.follow(alice, bob)
        store = MastodonTimelineStore(
            database: try database ?? SQLiteDatabase.inMemory(schema: MastodonTimelineSchema.schema), now: now)
        engine = try await Self.engine(
            http: http, store: store, clock: clock, pageLimit: pageLimit, knowCapabilities: knowCapabilities)
    }

    /// An engine for `token`'s account over `http`, with capabilities fetched first when `knowCapabilities`.
    static func engine(
        http: SandboxHTTPServer, store: MastodonTimelineStore, clock: TestClock, token: String = "alice-token",
        account: String = "alice@sandbox", pageLimit: Int = 40, knowCapabilities: Bool = true,
        server: URL = URL(string: "https://sandbox.invalid")!
    ) async throws -> MastodonAccountEngine {
        let client = MastodonAPIClient(
            server: server, accountKey: account, authorization: MastodonAuthorization(token: token),
            transport: MastodonSandboxTransport(server: http))
        let capabilities = knowCapabilities ? try await MastodonCapabilities.fetch(with: client) : nil
        return MastodonAccountEngine(
            client: client, store: store, capabilities: capabilities, clock: clock, pageLimit: pageLimit)
    }

    /// Alice's engine over a client that waits for and informs a `RateBudget` of its own (on the fixture's clock
    /// and the sandbox's dates, so `X-RateLimit-Reset` means the same instant to both), and that budget.
    func budgetedEngine(pageLimit: Int = 40) async throws -> (MastodonAccountEngine, RateBudget) {
        let clock = clock
        let now: @Sendable () -> Date = { Self.epoch.addingTimeInterval(Double(clock.now.offset.components.seconds)) }
        let budget = RateBudget(configuration: .mastodon, clock: clock, wallClock: now, random: { 0.5 })
        let client = MastodonAPIClient(
            server: URL(string: "https://sandbox.invalid")!, accountKey: "alice@sandbox",
            authorization: MastodonAuthorization(token: "alice-token"),
            transport: MastodonSandboxTransport(server: http), budget: budget, now: now)
        let engine = MastodonAccountEngine(
            client: client, store: store, capabilities: try await self.engine.capabilities(), clock: clock,
            pageLimit: pageLimit)
        return (engine, budget)
    }

    /// Posts `count` statuses as bob; their IDs oldest first.
    @discardableResult
    func postMany(_ count: Int, content: String = "post") async -> [ServerID] {
        var ids: [ServerID] = []
        for index in 0..<count { ids.append(ServerID(await server.post(as: bob, "\(content) \(index)"))) }
        return ids
    }

    /// The status IDs of alice's cached home, newest first.
    func cachedHome() async throws -> [ServerID] {
        try await engine.entries().reversed().compactMap(\.statusID)
    }

    /// The home timeline as the server shows it to alice, newest first, paged by `Link` to the end.
    func serverHome() async throws -> [ServerID] {
        let client = MastodonAPIClient(
            server: URL(string: "https://sandbox.invalid")!, accountKey: "alice-check",
            authorization: MastodonAuthorization(token: "alice-token"),
            transport: MastodonSandboxTransport(server: http))
        return try await pageToTheEnd(client, limit: 40).ids
    }

    /// How many requests the log holds for paths starting with `prefix`.
    func requests(_ prefix: String, method: String = "GET") -> Int {
        log.entries.filter { $0.method == method && $0.path.hasPrefix(prefix) }.count
    }

    /// Refreshes, then fills every open gap and loads older pages until the end: the whole kept window.
    func syncToTheEnd(_ engine: MastodonAccountEngine? = nil, timeline: String = "home") async throws {
        let engine = engine ?? self.engine
        // A `min_id` page is the oldest rows above the anchor, and filters make it short while more remain:
        // refresh until one brings nothing new.
        var refreshes = 0
        while refreshes < 200 {
            let result = try await engine.refresh(timeline)
            guard result.inserted > 0 || result.gapInserted || result.cursorMoved else { break }
            refreshes += 1
        }
        for _ in 0..<200 {
            let entries = try await engine.entries(timeline)
            if let gap = entries.last(where: { $0.content == .gap(.open) }) {
                try await engine.loadGap(timeline, position: gap.position)
                continue
            }
            if try await engine.loadOlder(timeline).reachedEnd { return }
        }
    }
}
