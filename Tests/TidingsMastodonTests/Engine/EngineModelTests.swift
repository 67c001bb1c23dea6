import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox
import TidingsSandboxKit

/// Model-based test of the account engine across the sandbox's server variants (Mastodon, GoToSocial,
/// Pleroma, Nextcloud Social, Mastodon with a keyword filter): random server histories (posts by two followed
/// accounts, boosts, edits, deletes, mentions and favourites that notify the reader) interleaved with random
/// client operations (refresh, load older, gap loads from either side, favourite / bookmark / boost and their
/// undo, notification and unread polls, reading and marker syncs, going to the background, deletion
/// re-checks, restarts of the store, server errors and drops on the next request, the user stream started and
/// dropped — its events then arrive concurrently with the other operations, so a seed's interleaving is not
/// exactly reproducible, while every invariant must hold for any interleaving).
///
/// After every step: no duplicate in the cached home, statuses in strictly descending `ServerID` order, the
/// local markers never moved backwards. After quiescence (faults off, outbox replayed, every gap loaded, the
/// newest page reached, cached statuses re-checked): the cached home equals the server's home exactly (no
/// silent hole, no duplicate, no resurrected status), each cached status has the server's text and the
/// reader's state, the server's markers are the local ones, and every notification the server shows is stored.
///
/// `TIDINGS_MASTODON_ENGINE_MODEL_CASES=N` runs N seeds, `TIDINGS_MASTODON_ENGINE_MODEL_SEED=S` starts at S; a
/// failure names its seed and prints its history.
@Suite(.timeLimit(.minutes(5)))
struct EngineModelTests {
    static var caseCount: Int {
        ProcessInfo.processInfo.environment["TIDINGS_MASTODON_ENGINE_MODEL_CASES"].flatMap { Int($0) } ?? 200
    }

    static var firstSeed: UInt64 {
        ProcessInfo.processInfo.environment["TIDINGS_MASTODON_ENGINE_MODEL_SEED"].flatMap { UInt64($0) }
            ?? 0xE9_0000
    }

    static let variants: [(String, MastodonSandboxVariant)] = {
        func lenient(_ variant: MastodonSandboxVariant) -> MastodonSandboxVariant {
            var variant = variant
            variant.requestsPerWindow = 1_000_000  // the virtual clock hardly moves: the window never ends
            return variant
        }
        var keyword = MastodonSandboxVariant.mastodon
        keyword.hiddenKeyword = "#hidden"
        var capped = MastodonSandboxVariant.mastodon
        capped.feedCap = 25
        return [
            ("mastodon", lenient(.mastodon)), ("gotosocial", lenient(.goToSocial)), ("pleroma", lenient(.pleroma)),
            ("nextcloud", lenient(.nextcloud)), ("mastodon+filter", lenient(keyword)),
            ("mastodon+cap", lenient(capped)),
        ]
    }()

    @Test func randomHistoriesConvergeToTheServersView() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("engine-model-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for index in 0..<Self.caseCount {
            let seed = Self.firstSeed &+ UInt64(index)
            var model = try await EngineModel(seed: seed, directory: directory)
            do {
                try await model.run()
            } catch {
                Issue.record(Comment(rawValue: "seed \(seed) threw \(error)\n" + model.history.joined(separator: "\n")))
                return
            }
            if let failure = model.failure {
                Issue.record(Comment(rawValue: "seed \(seed): \(failure)\n" + model.history.joined(separator: "\n")))
                return
            }
        }
    }
}

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
    /// The user stream, while the model has it running (never on Nextcloud Social, which offers none).
    var stream: MastodonUserStream?

    init(seed: UInt64, directory: URL) async throws {
        self.seed = seed
        rng = SplitMix64(seed: seed)
        let (name, variant) = EngineModelTests.variants[
            Int.random(in: 0..<EngineModelTests.variants.count, using: &rng)]
        variantName = name
        hidden = variant.hiddenKeyword
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
        history.append("seed \(seed): \(name), page limit \(pageLimit)")
    }

    func client(_ token: String) -> MastodonAPIClient {
        MastodonAPIClient(
            server: URL(string: "https://sandbox.invalid")!, accountKey: "\(token)-model",
            authorization: MastodonAuthorization(token: token), transport: MastodonSandboxTransport(server: http))
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
        let live = try await client("alice-token").homeTimeline(MastodonPageRange(limit: 40)).items.map(\.id)
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
        let operation = Int.random(in: 0..<13, using: &rng)
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
                let result = try await engine.loadGap(position: gap.position, side: side)
                history.append("gap \(gap.position) \(side): \(result.inserted) in, closed \(result.gapClosed)")
            case 4, 5:
                guard let id = pick(cached) else { return }
                let action = pick([MastodonAction.favourite, .unfavourite, .bookmark, .unbookmark, .reblog, .unreblog])!
                let pending = try await engine.perform(action, on: id)
                history.append("\(action) \(id): \(pending == nil ? "nothing to do" : "sent")")
            case 6:
                try await engine.pollNotifications()
                _ = try await engine.pollUnreadCount()
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
                try await restart()
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
            default:
                guard let stream else { return }
                await stream.stop()
                history.append("stream dropped")
            }
        } catch let error as MastodonError where error == .server || error == .transport {
            history.append("  failed: \(error)")
        }
    }

    mutating func restart() async throws {
        await stream?.stop()
        stream = nil
        await clock.run()  // a pending debounced marker post runs (or fails) before the process ends
        store.database.close()
        let clock = clock
        store = MastodonTimelineStore(
            database: try await SQLiteDatabase.open(path: path, schema: MastodonTimelineSchema.schema),
            now: { EngineFixture.epoch.addingTimeInterval(Double(clock.now.offset.components.seconds)) })
        engine = MastodonAccountEngine(
            client: engine.client, store: store, capabilities: capabilities, clock: clock, pageLimit: engine.pageLimit)
        history.append("restart (\(try await engine.pendingActions().count) pending)")
        await engine.replayOutbox()
    }

    // MARK: Checks

    mutating func checkAlways() async throws {
        let home = try await engine.entries().compactMap(\.statusID)
        if Set(home).count != home.count { failure = "duplicate in \(home)" }
        if home != home.sorted() { failure = "out of order: \(home)" }
        for timeline in MastodonMarkerTimeline.allCases {
            let now = try await engine.localMarker(timeline)
            if let before = lastMarkers[timeline], now.map({ $0 < before }) ?? true {
                failure = "\(timeline) marker moved back from \(before) to \(String(describing: now))"
            }
            lastMarkers[timeline] = now
        }
    }

    mutating func quiesce() async throws {
        if let stream {
            let triggered = await (stream.refreshesTriggered, stream.notificationPollsTriggered, stream.state)
            history.append("stream: \(triggered.0) refreshes, \(triggered.1) polls, \(triggered.2)")
        }
        await stream?.stop()
        stream = nil
        faults.clear()
        await clock.run()
        history.append("— quiescence —")
        for _ in 0..<MastodonAccountEngine.maximumActionAttempts where !(try await engine.pendingActions().isEmpty) {
            await engine.replayOutbox()
        }
        let cached = try await engine.entries().compactMap(\.statusID)
        try await engine.recheckCachedStatuses(cached, limit: cached.count)
        var syncs = 0
        while syncs < 400 {
            syncs += 1
            let entries = try await engine.entries()
            if let gap = entries.last(where: { $0.content == .gap(.open) }) {
                try await engine.loadGap(position: gap.position)
                continue
            }
            let result = try await engine.refresh()
            if result.inserted > 0 || result.gapInserted || result.cursorMoved { continue }
            if try await engine.loadOlder().reachedEnd { break }
        }
        // A status fetched before a deletion and re-checked afterwards must be gone again.
        let all = try await engine.entries().compactMap(\.statusID)
        try await engine.recheckCachedStatuses(all, limit: all.count)
        try await engine.syncMarkers()
        try await engine.enterBackground()
        for _ in 0..<100 {
            let before = try await engine.notifications().count + engine.notificationGroups().count
            try await engine.pollNotifications()
            if try await engine.notifications().count + engine.notificationGroups().count == before { break }
        }
    }

    mutating func checkConverged() async throws {
        let alice = client("alice-token")
        var serverHome: [MastodonStatus] = []
        var range: MastodonPageRange? = MastodonPageRange(limit: 40)
        while let current = range {
            let page = try await alice.homeTimeline(current)
            serverHome += page.items
            range = page.older
        }
        let cached = try await engine.entries()
        let feed = serverHome.map(\.id)
        // With a feed cap, statuses older than the feed may stay cached (fetched while they were in it): they
        // must still exist, and lie below an unfillable gap or the feed's end; what the feed holds must be
        // cached exactly, above any gap.
        let oldestInFeed = feed.last
        let cachedIDs = cached.compactMap(\.statusID).reversed().filter { id in oldestInFeed.map { id >= $0 } ?? false }
        let belowFeed = cached.compactMap(\.statusID).filter { id in oldestInFeed.map { id < $0 } ?? true }
        for (index, entry) in cached.enumerated() where entry.isGap {
            let above = cached[(index + 1)...].first { !$0.isGap }?.statusID
            let insideFeed = above.map { above in oldestInFeed.map { above > $0 } ?? true } ?? true
            if entry.content == .gap(.open) || insideFeed {
                failure = "a gap is left at \(entry.position) below \(String(describing: above)): \(cached)"
            }
        }
        if cachedIDs != feed {
            failure = "cache \(cachedIDs) ≠ server \(feed)"
            return
        }
        for id in belowFeed {
            if (try? await alice.status(id: id)) == nil { failure = "\(id), below the feed, is deleted or unreadable" }
        }
        if !belowFeed.isEmpty && !variantName.hasSuffix("cap") { failure = "cached below the end: \(belowFeed)" }
        for status in serverHome {
            guard let mine = try await engine.status(status.id) else {
                failure = "\(status.id) not readable"
                return
            }
            let inner = (mine.reblog ?? mine, status.reblog ?? status)
            if inner.0.content != inner.1.content || inner.0.favourited != inner.1.favourited
                || inner.0.bookmarked != inner.1.bookmarked || inner.0.reblogged != inner.1.reblogged
            {
                failure = "\(status.id) differs: cached \(mine) server \(status)"
                return
            }
        }
        let markers = try await alice.markers()
        if let local = try await engine.localMarker(.home), markers.home?.lastReadID != local {
            failure = "server home marker \(String(describing: markers.home?.lastReadID)) ≠ local \(local)"
        }
        let notifications = try await alice.notifications(MastodonPageRange(limit: 40)).items.map(\.id)
        if capabilities.supportsGroupedNotifications {
            let stored = Set(try await engine.notificationGroups().compactMap(\.group.mostRecentNotificationID))
            let newest = try await alice.groupedNotifications(MastodonPageRange(limit: 40)).results
                .notificationGroups.compactMap(\.mostRecentNotificationID)
            // Polls move forward from the newest stored; older ones are history the app pages to on request.
            let expected = newest.filter { id in stored.min().map { id >= $0 } ?? true }
            if !Set(expected).isSubset(of: stored) { failure = "groups \(newest) not all stored in \(stored)" }
        } else {
            let stored = Set(try await engine.notifications().map(\.id))
            let expected = notifications.filter { id in stored.min().map { id >= $0 } ?? true }
            if !Set(expected).isSubset(of: stored) { failure = "notifications \(notifications) not in \(stored)" }
        }
    }
}
