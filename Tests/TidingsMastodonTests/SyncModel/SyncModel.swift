import Foundation
import PeerSupport
import TidingsCore
import TidingsMastodon
import TidingsSandbox
import TidingsSandboxKit

/// One seeded history of an app driving `MastodonSync` (``SyncModelTests``).
struct SyncModel {
    static let accountKey = "alice@sandbox"
    /// Virtual minutes without any change from sync that end quiescence.
    static let idleMinutes: Int64 = 12
    /// The most virtual time quiescence may take before the history fails for not settling: 2 hours at the
    /// largest page limit (8), longer in proportion for smaller pages. A tick makes 3 requests at most (seed 002
    /// §3), so catching up a backlog goes at about `pageLimit - 1` statuses a tick (a `min_id` page repeats its
    /// anchor): with pages of 2 and Low Power's minute, a 400-entry feed takes almost 7 hours.
    var quiescenceLimit: Int64 { 2 * 3600 * 8 / Int64(max(pageLimit, 1)) }

    var rng: SplitMix64
    let seed: UInt64
    let variantName: String
    let variant: MastodonSandboxVariant
    let clock = TestClock()
    let server: MastodonSandboxServer
    let faults = SandboxFaultSwitch()
    let log = SandboxRequestLog()
    let http: SandboxHTTPServer
    let path: String
    let alice: String
    let bob: String
    let carol: String
    let pageLimit: Int
    let now: @Sendable () -> Date
    var store: MastodonTimelineStore
    var sync: MastodonSync
    var engine: MastodonAccountEngine
    var history: [String] = [] {
        didSet { if Self.trace, let line = history.last { print("trace \(seed): \(line)") } }
    }
    /// Prints each history line as it happens (`TIDINGS_MASTODON_SYNC_MODEL_TRACE=1`), for a seed that hangs.
    static let trace = ProcessInfo.processInfo.environment["TIDINGS_MASTODON_SYNC_MODEL_TRACE"] == "1"
    var failure: String?
    /// The app's state, as last told to sync (and told again at each launch).
    var app = SyncModelApp()
    var lastMarkers: [MastodonMarkerTimeline: ServerID] = [:]
    var intents = EngineModelIntents()
    let failedActions = EngineModelFailures()
    /// Counts sync's changes that show work done (read by quiescence to tell when sync is idle).
    let activity = SyncModelActivity()

    init(seed: UInt64, directory: URL) async throws {
        self.seed = seed
        rng = SplitMix64(seed: seed)
        let (name, variant) = SyncModelTests.variants[Int.random(in: 0..<SyncModelTests.variants.count, using: &rng)]
        variantName = name
        self.variant = variant
        let clock = clock
        now = { EngineFixture.epoch.addingTimeInterval(Double(clock.now.offset.components.seconds)) }
        server = MastodonSandboxServer(variant: variant, now: now)
        http = server.httpServer(faults: faults, log: log, clock: clock)
        alice = await server.addAccount(username: "alice", token: "alice-token")
        bob = await server.addAccount(username: "bob", token: "bob-token")
        carol = await server.addAccount(username: "carol", token: "carol-token")
        await server.follow(alice, bob)
        await server.follow(alice, carol)
        for index in 0..<Int.random(in: 0...30, using: &rng) { await server.post(as: bob, "before \(index)") }
        path = directory.appendingPathComponent("sync-model-\(seed).sqlite").path
        try? SQLiteDatabase.removeFiles(at: path)
        pageLimit = Int.random(in: 2...8, using: &rng)
        store = MastodonTimelineStore(
            database: try await SQLiteDatabase.open(path: path, schema: MastodonTimelineSchema.schema), now: now)
        (sync, engine) = await Self.launch(
            clock: clock, http: http, store: store, pageLimit: pageLimit, app: app, activity: activity)
        failedActions.watch(engine)
        history.append("seed \(seed): \(name), page limit \(pageLimit), \(variant.feedCap) in the feed")
        if Self.trace { print("trace \(seed): \(history[0])") }
    }

    /// What an app does on launch: a sync object, the app's state told, the account added (capabilities,
    /// filters, markers, outbox replay and polling, as `MastodonSync` does them).
    static func launch(
        clock: TestClock, http: SandboxHTTPServer, store: MastodonTimelineStore, pageLimit: Int, app: SyncModelApp,
        activity: SyncModelActivity
    ) async -> (MastodonSync, MastodonAccountEngine) {
        let sync = MastodonSync(
            clock: clock, streamConnector: MastodonSandboxServer.inProcessStreamConnector(http), random: { 0.5 })
        activity.watch(sync)
        await sync.appStateChanged(.foreground(app.foreground))
        await sync.appStateChanged(.networkPath(app.online ? .wifi : .offline))
        await sync.appStateChanged(.lowPower(app.lowPower))
        await sync.appStateChanged(.activeAccount(accountKey))
        await sync.appStateChanged(.visibleTimeline(app.visible))
        let client = MastodonAPIClient(
            server: URL(string: "https://sandbox.invalid")!, accountKey: accountKey,
            authorization: MastodonAuthorization(token: "alice-token"),
            transport: MastodonSandboxTransport(server: http))
        let engine = await sync.addAccount(client: client, store: store, pageLimit: pageLimit)
        return (sync, engine)
    }

    /// A client of `token`'s account for the server's side of the history and for the checks.
    func client(_ token: String) -> MastodonAPIClient {
        MastodonAPIClient(
            server: URL(string: "https://sandbox.invalid")!, accountKey: "\(token)-model",
            authorization: MastodonAuthorization(token: token), transport: MastodonSandboxTransport(server: http))
    }

    mutating func pick<T>(_ items: [T]) -> T? {
        items.isEmpty ? nil : items[Int.random(in: 0..<items.count, using: &rng)]
    }

    /// Runs `body` with no fault armed (the server's side of the history and the checks are not the app's
    /// requests), then arms again what was armed.
    func withoutFaults<T>(_ body: () async throws -> T) async rethrows -> T {
        let armed = faults.faults.rules
        faults.clear()
        defer { for rule in armed { faults.add(rule.action, on: rule.match, times: rule.times) } }
        return try await body()
    }

    mutating func run() async throws {
        let steps = Int.random(in: 8...30, using: &rng)
        for _ in 0..<steps {
            if Int.random(in: 0..<5, using: &rng) < 2 {
                try await serverStep()
            } else {
                try await appStep()
            }
            try await checkAlways()
            if failure != nil { return }
        }
        try await quiesce()
        if failure == nil { try await checkConverged() }
    }

    // MARK: Server history

    mutating func serverStep() async throws {
        let page = try await withoutFaults {
            try await client("alice-token").homeTimeline(MastodonPageRange(limit: 40)).items
        }
        let live = page.map(\.id)
        switch Int.random(in: 0..<8, using: &rng) {
        case 0, 1, 2:
            let author = Bool.random(using: &rng) ? bob : carol
            let count = Int.random(in: 1...(Bool.random(using: &rng) ? 4 : 50), using: &rng)
            for index in 0..<count {
                let hide = variant.hiddenKeyword != nil && Int.random(in: 0..<4, using: &rng) == 0
                await server.post(as: author, hide ? "#hidden \(index)" : "post \(index)")
            }
            history.append("server: \(count) posts")
        case 3:
            guard let id = pick(live) else { return }
            _ = try? await withoutFaults { try await client("carol-token").perform(.reblog, status: id) }
            history.append("server: carol boosts \(id)")
        case 4:
            guard let id = pick(live) else { return }
            await server.edit(id.rawValue, content: "edited \(Int.random(in: 0..<1000, using: &rng))")
            history.append("server: edit \(id)")
        case 5:
            guard let id = pick(live) else { return }
            await server.delete(id.rawValue)
            // Deleting the reader's own boost elsewhere undoes it: what she asked for here no longer stands.
            if let deleted = page.first(where: { $0.id == id }), let inner = deleted.reblog?.id,
                deleted.account?.id.rawValue == alice
            {
                intents.forget(.reblog, on: inner)
            }
            history.append("server: delete \(id)")
        case 6:
            for _ in 0..<Int.random(in: 1...(Bool.random(using: &rng) ? 3 : 60), using: &rng) {
                await server.post(as: bob, "hi @alice", mentioning: [alice])
            }
            history.append("server: mentions")
        default:
            let own = await server.post(as: alice, "mine")
            _ = try? await withoutFaults { try await client("bob-token").perform(.favourite, status: ServerID(own)) }
            history.append("server: alice posts \(own), bob favourites it")
        }
    }
}

/// The app's state as the model last told it to sync.
struct SyncModelApp {
    var foreground = true
    var online = true
    var visible: String? = MastodonTimelineKey.homeTimeline
    var lowPower = false
}

/// Counts the changes of every sync object of a history that show work done, so quiescence can tell that
/// sync has been idle; stream states and unread counts (which a safety-net poll repeats) do not count.
final class SyncModelActivity: Sendable {
    private let count = LockedState(0)
    private let recent = LockedState([String]())
    private let readers = LockedState([Task<Void, Never>]())

    var changes: Int { count.withLock { $0 } }

    /// The last few changes counted, for a history that does not settle.
    var last: [String] { recent.withLock { $0 } }

    func watch(_ sync: MastodonSync) {
        let subscription = sync.changes()
        let count = count
        let recent = recent
        let reader = Task {
            for await change in subscription {
                switch change {
                case .engine(_, .unread), .stream, .capabilities: break
                default:
                    count.withLock { $0 += 1 }
                    recent.withLock { $0 = Array(($0 + ["\(change)"]).suffix(6)) }
                }
            }
        }
        readers.withLock { $0.append(reader) }
    }

    func cancel() {
        for reader in readers.withLock({ $0 }) { reader.cancel() }
    }
}
