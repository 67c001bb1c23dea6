import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsKecalek
import TidingsSandbox

/// Model-based test (issue 9): random server variants × random histories × random client schedules; after
/// quiescence the cache must equal the server's view of the window.
///
/// `TIDINGS_MODEL_CASES=N` runs N cases (1,000 by default), `TIDINGS_MODEL_SEED=S` starts at seed S. A
/// failure prints the seed, the variant and the history. A seed fixes the whole case: the server variant,
/// the history, the client's schedule (syncs, clean relaunches and kills, kills between the transactions of
/// a sync, dropped connections and error answers injected through the sandbox's faults, one case in sixteen
/// over a SQLite file reopened by every relaunch) and the interleaving of notifications, which
/// ``ScheduledNotificationTransport`` delivers at seeded points in front of responses or while the client
/// is idle. After quiescence the cache must hold the server's window (nothing lost without a reported gap,
/// nothing resurrected, no duplicate), no `mark_read` may carry an own or already-read message, no cached
/// reaction may be one the server never had, and when every reaction and pin notification reached the
/// client, every cached message shows the server's reactions and pin.
@Suite(.timeLimit(.minutes(10))) struct KecalekModelTests {
    static let conversation = "c"
    static let me = "alice"

    static var caseCount: Int {
        ProcessInfo.processInfo.environment["TIDINGS_MODEL_CASES"].flatMap { Int($0) } ?? 1000
    }

    static var firstSeed: UInt64 {
        ProcessInfo.processInfo.environment["TIDINGS_MODEL_SEED"].flatMap { UInt64($0) } ?? 0x5EED_0000
    }

    @Test func randomServersHistoriesAndSchedulesConverge() async throws {
        let count = Self.caseCount
        let first = Self.firstSeed
        var failures: [String] = []
        try await withThrowingTaskGroup(of: String?.self) { group in
            var next = 0
            // Two cases at a time: one per core.
            for _ in 0..<min(2, count) {
                let seed = first &+ UInt64(next)
                next += 1
                group.addTask { try await Self.runCase(seed: seed) }
            }
            while let result = try await group.next() {
                if let result { failures.append(result) }
                if next < count, failures.isEmpty {
                    let seed = first &+ UInt64(next)
                    next += 1
                    group.addTask { try await Self.runCase(seed: seed) }
                }
            }
        }
        for failure in failures.prefix(3) { Issue.record(Comment(rawValue: failure)) }
    }

    static func randomVariant(_ rng: inout SplitMix64) -> KecalekSandboxServer.Variant {
        KecalekSandboxServer.Variant(
            resolution: Bool.random(using: &rng) ? .second : .millisecond,
            pageOrder: Bool.random(using: &rng) ? .oldestFirst : .newestFirst,
            honoursOffset: Int.random(in: 0..<4, using: &rng) != 0,
            comparison: Bool.random(using: &rng) ? .greater : .greaterOrEqual,
            notifications: [.all, .none, .withoutDeletions][Int.random(in: 0..<3, using: &rng)],
            pageSizeCap: Bool.random(using: &rng) ? nil : Int.random(in: 2...8, using: &rng))
    }

    /// Runs one case; nil when every invariant held, else the failure with its seed and history.
    static func runCase(seed: UInt64) async throws -> String? {
        var rng = SplitMix64(seed: seed)
        let variant = randomVariant(&rng)
        let clock = TestClock()
        let server = KecalekSandboxServer(clock: clock)
        await server.createConversation(conversation, members: [me, "bob", "carol"])
        await server.setVariant(variant)
        // One case in sixteen runs over a SQLite file that every relaunch opens again (slower: it is written).
        let file = Int.random(in: 0..<16, using: &rng) == 0 ? try ModelCacheFile() : nil
        defer { file?.remove() }
        var cache: any KecalekMessageCache = try await file?.open() ?? KecalekMemoryCache()
        let transport = ScheduledNotificationTransport(server.transport(userID: me), seed: seed ^ 0x6E07_1F1C_A710_0000)
        var history = ["variant: \(variant)\(file == nil ? "" : ", SQLite file")"]
        var droppedByFault = false

        func launch(reopening: Bool) async throws -> KecalekClient {
            if reopening, let file { cache = try await file.open() }
            let client = KecalekClient(
                configuration: .init(userID: me, reconnects: false), transport: transport, cache: cache,
                decryptor: server.cipher, clock: clock)
            try await client.connect()
            return client
        }

        /// Delivers every held notification while the client is idle and waits until it applied them.
        func deliverHeld(to client: KecalekClient) async -> Bool {
            guard await client.connectionState == .connected else { return false }
            return await transport.deliverHeld {
                await server.sendRaw(ScheduledNotificationTransport.flushFrame, to: me)
            }
        }

        var client = try await launch(reopening: false)
        var floor: KecalekTimestamp?
        var posted = 0
        for _ in 0..<Int.random(in: 4...18, using: &rng) {
            let ids = await server.messageIDs(conversation: conversation)
            switch Int.random(in: 0..<100, using: &rng) {
            case 0..<30:
                if Bool.random(using: &rng) { await server.advanceTime(by: .seconds(1)) }
                let count = Int.random(in: 1...8, using: &rng)
                let sender = ["bob", "carol", me][Int.random(in: 0..<3, using: &rng)]
                for _ in 0..<count {
                    posted += 1
                    try await server.post(conversation: conversation, from: sender, text: "m\(posted)")
                }
                history.append("post \(count) from \(sender)")
            case 30..<42 where !ids.isEmpty:
                let id = ids[Int.random(in: 0..<ids.count, using: &rng)]
                await server.delete(conversation: conversation, messageID: id)
                history.append("delete \(id)")
            case 42..<50 where !ids.isEmpty:
                let id = ids[Int.random(in: 0..<ids.count, using: &rng)]
                let reactor = ["bob", "carol"][Int.random(in: 0..<2, using: &rng)]
                await server.react(conversation: conversation, messageID: id, userID: reactor, emoji: "👍")
                history.append("react \(id) by \(reactor)")
            case 50..<55 where !ids.isEmpty:
                let id = ids[Int.random(in: 0..<ids.count, using: &rng)]
                let pinned = Bool.random(using: &rng)
                await server.pin(conversation: conversation, messageID: id, pinned: pinned)
                history.append("pin \(id) \(pinned)")
            case 55..<62 where !ids.isEmpty:
                let read = ids.filter { _ in Bool.random(using: &rng) }
                await server.markReadElsewhere(conversation: conversation, messageIDs: read, by: me)
                history.append("read elsewhere \(read.count)")
            case 62..<90:
                let limit = Int.random(in: 2...12, using: &rng)
                var note = ""
                let mishap = Int.random(in: 0..<100, using: &rng)
                let type = ["get_messages", "get_deleted_since", "mark_read"][Int.random(in: 0..<3, using: &rng)]
                if mishap < 8 {
                    await server.inject(.dropConnection, on: type)
                    note = " (connection dropped at \(type))"
                } else if mishap < 14 {
                    await server.inject(.errorStatus("internal_error"), on: type)
                    note = " (error status at \(type))"
                } else if mishap < 22 {
                    let ordinal = Int.random(in: 1...4, using: &rng)
                    transport.cut(beforeResponse: ordinal)
                    note = " (killed before response \(ordinal))"
                }
                let page = await client.messages(conversation: conversation, limit: limit)
                await server.clearFaults()
                transport.cancelCut()
                if floor == nil, page.source.isFull, let oldest = page.messages.first?.createdAt { floor = oldest }
                history.append(
                    "sync limit \(limit)\(note): \(page.source) new \(page.newMessageIDs) deleted \(page.deletedMessageIDs)"
                        + " gap \(page.gapRemains)")
                if await client.connectionState != .connected {
                    // Killed or dropped mid-sync: the app starts again over the same cache.
                    droppedByFault = droppedByFault || mishap < 8
                    await client.close()
                    client = try await launch(reopening: true)
                    history.append("relaunch after the lost connection")
                }
            case 90..<95:
                let clean = Bool.random(using: &rng)
                if clean { _ = await deliverHeld(to: client) }
                await client.close()
                client = try await launch(reopening: true)
                history.append(clean ? "relaunch" : "kill and relaunch (held notifications lost)")
            case 95..<98:
                let delivered = await deliverHeld(to: client)
                history.append("notifications delivered while idle: \(delivered)")
            default:
                let seconds = Int.random(in: 1...3, using: &rng)
                await server.advanceTime(by: .seconds(seconds))
                history.append("wait \(seconds) s")
            }
        }
        // Quiescence: every held notification delivered, then a fresh client syncs.
        _ = await deliverHeld(to: client)
        await client.close()
        client = try await launch(reopening: true)
        var last = await client.messages(conversation: conversation, limit: 12)
        if floor == nil, last.source.isFull, let oldest = last.messages.first?.createdAt { floor = oldest }
        for _ in 0..<3 where last.gapRemains {
            last = await client.messages(conversation: conversation, limit: 12)
        }
        await client.close()
        history.append(
            "final sync: \(last.source) new \(last.newMessageIDs) deleted \(last.deletedMessageIDs) gap \(last.gapRemains)"
        )
        let lossless = transport.discarded == 0 && !droppedByFault
        history.append("notifications lost: \(transport.discarded)\(droppedByFault ? " + a dropped connection" : "")")
        let problems = try await check(
            server: server, cache: cache, floor: floor, last: last,
            notificationsComplete: lossless && variant.notifications != .none,
            unacknowledgedReads: transport.unacknowledgedReads)
        guard !problems.isEmpty else { return nil }
        return "seed \(seed): " + problems.joined(separator: "; ") + "\n  " + history.joined(separator: "\n  ")
    }

    /// The invariants after quiescence.
    ///
    /// - Parameters:
    ///   - notificationsComplete: every reaction and pin notification reached the client, so every cached
    ///     message must show the server's reactions and pin.
    ///   - unacknowledgedReads: IDs of `mark_read`s whose answer was cut off (their retry is allowed).
    static func check(
        server: KecalekSandboxServer, cache: any KecalekMessageCache, floor: KecalekTimestamp?,
        last: KecalekMessagePage, notificationsComplete: Bool, unacknowledgedReads: Set<String>
    ) async throws -> [String] {
        var problems: [String] = []
        let serverIDs = await server.messageIDs(conversation: conversation)
        let serverSet = Set(serverIDs)
        let cachedMessages = try cache.newestMessages(conversationID: conversation, limit: .max)
        let cached = cachedMessages.map(\.messageID)
        let resurrected = cached.filter { !serverSet.contains($0) }
        if !resurrected.isEmpty { problems.append("resurrected \(resurrected)") }
        if Set(cached).count != cached.count { problems.append("duplicates in \(cached)") }
        if let floor {
            var missing: [String] = []
            for id in serverIDs where !cached.contains(id) {
                if let wire = await server.message(conversation: conversation, messageID: id), wire.createdAt > floor {
                    missing.append(id)
                }
            }
            if !missing.isEmpty, !last.gapRemains { problems.append("lost without a gap: \(missing)") }
        }
        for message in cachedMessages {
            guard let wire = await server.message(conversation: conversation, messageID: message.messageID) else {
                continue
            }
            let invented = Set(message.reactions).subtracting(wire.reactions)
            if !invented.isEmpty { problems.append("\(message.messageID) has reactions the server never had") }
            guard notificationsComplete else { continue }
            if Set(message.reactions) != Set(wire.reactions) {
                problems.append("\(message.messageID) reactions \(message.reactions) ≠ server \(wire.reactions)")
            }
            if message.pinned != wire.pinned {
                problems.append("\(message.messageID) pinned \(message.pinned) ≠ server \(wire.pinned)")
            }
        }
        // A `mark_read` the server applied but whose answer a kill cut off is sent again: the client cannot
        // tell it from one the server never saw.
        let redundant = await server.redundantReadMarks.filter { !unacknowledgedReads.contains($0) }
        if !redundant.isEmpty { problems.append("marked read although own or already read: \(redundant)") }
        return problems
    }
}

/// A SQLite cache file of one model case, opened on a queue of its own (opening reads and may migrate it).
struct ModelCacheFile: Sendable {
    let directory: URL
    let key = TidingsCrypto.SymmetricKey.random()

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tidings-model-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func open() async throws -> KecalekSQLiteCache {
        let path = directory.appendingPathComponent("cache.sqlite").path
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue(label: "test.kecalek.model-cache").async {
                continuation.resume(with: Result { [key] in try KecalekSQLiteCache(path: path, key: key) })
            }
        }
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }
}
