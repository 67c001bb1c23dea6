import Foundation
import PeerSupport
import TidingsCore
import TidingsMastodon
import TidingsSandbox
import TidingsSandboxKit

/// One seeded history.
struct EngineModel {
    var rng: SplitMix64
    let seed: UInt64
    let variantName: String
    let clock = TestClock()
    let server: MastodonSandboxServer
    let faults = SandboxFaultSwitch()
    let http: SandboxHTTPServer
    let path: String
    var store: MastodonTimelineStore
    var engine: MastodonAccountEngine
    var capabilities: MastodonCapabilities
    let alice: String
    let bob: String
    let carol: String
    var history: [String] = []
    var failure: String?
    var lastMarkers: [MastodonMarkerTimeline: ServerID] = [:]
    let hidden: String?
    let variant: MastodonSandboxVariant
    /// The user stream, while the model has it running (never on Nextcloud Social, which offers none).
    var stream: MastodonUserStream?
    /// What the reader last asked for, per status the server acts on and per kind of action: the server must
    /// show it after quiescence unless the engine reported the action failed (``EngineModelIntents``).
    var intents = EngineModelIntents()
    /// The actions the engines of this history reported failed (read from their change streams).
    let failedActions = EngineModelFailures()

    init(seed: UInt64, directory: URL) async throws {
        self.seed = seed
        rng = SplitMix64(seed: seed)
        let (name, variant) = EngineModelTests.variants[
            Int.random(in: 0..<EngineModelTests.variants.count, using: &rng)]
        variantName = name
        hidden = variant.hiddenKeyword
        self.variant = variant
        let clock = clock
        let now: @Sendable () -> Date = {
            EngineFixture.epoch.addingTimeInterval(Double(clock.now.offset.components.seconds))
        }
        server = MastodonSandboxServer(variant: variant, now: now)
        http = server.httpServer(faults: faults, clock: clock)
        alice = await server.addAccount(username: "alice", token: "alice-token")
        bob = await server.addAccount(username: "bob", token: "bob-token")
        carol = await server.addAccount(username: "carol", token: "carol-token")
        await server.follow(alice, bob)
        await server.follow(alice, carol)
        path = directory.appendingPathComponent("model-\(seed).sqlite").path
        try? SQLiteDatabase.removeFiles(at: path)
        store = MastodonTimelineStore(
            database: try await SQLiteDatabase.open(path: path, schema: MastodonTimelineSchema.schema), now: now)
        let pageLimit = Int.random(in: 2...6, using: &rng)
        engine = try await EngineFixture.engine(http: http, store: store, clock: clock, pageLimit: pageLimit)
        capabilities = try await engine.capabilities()
        failedActions.watch(engine)
        history.append("seed \(seed): \(name), page limit \(pageLimit)")
    }

    func client(_ token: String) -> MastodonAPIClient {
        MastodonAPIClient(
            server: URL(string: "https://sandbox.invalid")!, accountKey: "\(token)-model",
            authorization: MastodonAuthorization(token: token), transport: MastodonSandboxTransport(server: http))
    }

    /// Favourites, bookmarks or boosts a cached status (or undoes it) and records what the reader asked for.
    mutating func performRandomAction(on cached: [ServerID]) async throws {
        guard let id = pick(cached) else { return }
        let action = pick([MastodonAction.favourite, .unfavourite, .bookmark, .unbookmark, .reblog, .unreblog])!
        // The server acts on the status a boost boosts.
        let target = try await engine.status(id).flatMap { $0.reblog?.id } ?? id
        let pending = try await engine.perform(action, on: id)
        // "Nothing to do" means the row shows it already: through the server's state, or an action still
        // pending (whose intent stays recorded, with its outbox row, in case it fails). Every copy of a status
        // (its own row, each boost) shows the same state, so it never means a stale copy: the intent stands.
        if let pending { intents.record(action, on: target, pending: pending.id) }
        history.append("\(action) \(id): \(pending.map { "sent as \($0.id)" } ?? "nothing to do")")
    }

    mutating func pick<T>(_ items: [T]) -> T? {
        items.isEmpty ? nil : items[Int.random(in: 0..<items.count, using: &rng)]
    }

    mutating func run() async throws {
        let steps = Int.random(in: 10...40, using: &rng)
        for _ in 0..<steps {
            if Bool.random(using: &rng) {
                try await serverStep()
            } else {
                try await clientStep()
            }
            if stream != nil {
                // Let the stream's coalescing windows (and backoff) run on the virtual clock now and then.
                await clock.advance(by: .seconds(Int64.random(in: 0...4, using: &rng)))
            }
            try await checkAlways()
            if failure != nil { return }
        }
        try await quiesce()
        try await checkConverged()
    }

    // MARK: Server history

    mutating func serverStep() async throws {
        // Other accounts' requests do not take the fault armed for the reader's next request.
        let armed = faults.faults.rules
        faults.clear()
        defer { for rule in armed { faults.add(rule.action, on: rule.match, times: rule.times) } }
        let page = try await client("alice-token").homeTimeline(MastodonPageRange(limit: 40)).items
        let live = page.map(\.id)
        switch Int.random(in: 0..<7, using: &rng) {
        case 0, 1:
            let author = Bool.random(using: &rng) ? bob : carol
            let count = Int.random(in: 1...6, using: &rng)
            for index in 0..<count {
                let text =
                    hidden != nil && Int.random(in: 0..<4, using: &rng) == 0 ? "#hidden \(index)" : "post \(index)"
                await server.post(as: author, text)
            }
            history.append("server: \(count) posts")
        case 2:
            guard let id = pick(live) else { return }
            _ = try? await client("carol-token").perform(.reblog, status: id)
            history.append("server: carol boosts \(id)")
        case 3:
            guard let id = pick(live) else { return }
            await server.edit(id.rawValue, content: "edited \(Int.random(in: 0..<1000, using: &rng))")
            history.append("server: edit \(id)")
        case 4:
            guard let id = pick(live) else { return }
            await server.delete(id.rawValue)
            // Deleting the reader's own boost elsewhere undoes it: what she asked for here no longer stands.
            if let deleted = page.first(where: { $0.id == id }), let inner = deleted.reblog?.id,
                deleted.account?.id.rawValue == alice
            {
                intents.forget(.reblog, on: inner)
            }
            history.append("server: delete \(id)")
        case 5:
            await server.post(as: bob, "hi @alice", mentioning: [alice])
            history.append("server: mention")
        default:
            let own = await server.post(as: alice, "mine")
            _ = try? await client("bob-token").perform(.favourite, status: ServerID(own))
            history.append("server: alice posts \(own), bob favourites it")
        }
    }

    // MARK: Client operations

    mutating func clientStep() async throws {
        if Int.random(in: 0..<6, using: &rng) == 0 {
            let fault: SandboxFaults.Action = Bool.random(using: &rng) ? .status(500) : .dropMidResponse
            faults.add(fault, times: 1)
            history.append("fault: \(fault) on the next request")
        }
        let cached = try await engine.entries().compactMap(\.statusID)
        let operation = Int.random(in: 0..<17, using: &rng)
        do {
            switch operation {
            case 0, 1:
                let result = try await engine.refresh()
                history.append("refresh: \(result.inserted) in, gap \(result.gapInserted)")
            case 2:
                let result = try await engine.loadOlder()
                history.append("older: \(result.inserted) in, end \(result.reachedEnd)")
            case 3:
                let gaps = try await engine.entries().filter { $0.content == .gap(.open) }
                guard let gap = pick(gaps) else { return }
                let side: MastodonGapSide = Bool.random(using: &rng) ? .newer : .older
                do {
                    let result = try await engine.loadGap(position: gap.position, side: side)
                    history.append("gap \(gap.position) \(side): \(result.inserted) in, closed \(result.gapClosed)")
                } catch let error as MastodonTimelineError where error == .gapNotFound && stream != nil {
                    // The stream's events run concurrently: a refresh fills (and moves) the gap on top, a delete
                    // merges gaps. The app gets the same typed error and reads the entries again.
                    history.append("gap \(gap.position) \(side): gone meanwhile")
                }
            case 4, 5:
                try await performRandomAction(on: cached)
            case 6:
                try await engine.pollNotifications()
                do {
                    _ = try await engine.pollUnreadCount()
                } catch let error as MastodonError where error == .notFound {
                    // Nextcloud Social has no unread count (the scheduler polls notifications in its place).
                }
                history.append("notifications polled")
            case 7:
                guard let id = pick(cached) else { return }
                let moved = try await engine.markRead(.home, upTo: id)
                history.append("read up to \(id): moved \(moved)")
                await clock.advance(by: .seconds(Int64.random(in: 0...12, using: &rng)))
            case 8:
                if Bool.random(using: &rng) {
                    try await engine.syncMarkers()
                    history.append("markers synced (foreground)")
                } else {
                    try await engine.enterBackground()
                    history.append("background")
                }
            case 9:
                let deleted = try await engine.recheckCachedStatuses(limit: Int.random(in: 1...10, using: &rng))
                history.append("recheck: \(deleted) deleted")
            case 10:
                if Bool.random(using: &rng) {
                    try await restart()
                } else {
                    try await crashWithPendingAction(cached)
                }
            case 13:
                try await crashMidOperation(cached)
            case 14:
                try await pollThroughScheduler()
            case 16:
                try await offlineStretch(cached)
            case 11:
                if let stream {
                    await stream.resume()
                } else {
                    let started = MastodonUserStream(
                        engine: engine, connector: MastodonSandboxServer.inProcessStreamConnector(http), clock: clock)
                    await started.start()
                    stream = started
                }
                history.append("stream started")
            case 15:
                if let stream {
                    // Background closes the socket at once; foreground reopens it (and syncs markers).
                    await stream.stop()
                    try await engine.enterBackground()
                    await stream.resume()
                    try await engine.syncMarkers()
                    history.append("background, then foreground with the stream")
                } else {
                    try await engine.enterBackground()
                    try await engine.syncMarkers()
                    history.append("background, then foreground")
                }
            default:
                guard let stream else { return }
                await stream.stop()
                history.append("stream dropped")
            }
        } catch let error as MastodonError where error == .server || error == .transport {
            history.append("  failed: \(error)")
        }
    }
}
