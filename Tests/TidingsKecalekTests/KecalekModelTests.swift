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
/// failure prints the seed, the variant and the history. Notifications are applied by the client's read
/// loop concurrently with the schedule, so a seed replays the same history but not always the same
/// interleaving: the invariants must hold for every interleaving.
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
        let cache = KecalekMemoryCache()
        var history = ["variant: \(variant)"]

        func launch() async throws -> KecalekClient {
            let client = KecalekClient(
                configuration: .init(userID: me, reconnects: false), transport: server.transport(userID: me),
                cache: cache, decryptor: server.cipher, clock: clock)
            try await client.connect()
            return client
        }

        var client = try await launch()
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
                await server.react(conversation: conversation, messageID: id, userID: "bob", emoji: "👍")
                history.append("react \(id)")
            case 50..<55 where !ids.isEmpty:
                let id = ids[Int.random(in: 0..<ids.count, using: &rng)]
                await server.pin(conversation: conversation, messageID: id, pinned: Bool.random(using: &rng))
                history.append("pin \(id)")
            case 55..<62 where !ids.isEmpty:
                let read = ids.filter { _ in Bool.random(using: &rng) }
                await server.markReadElsewhere(conversation: conversation, messageIDs: read, by: me)
                history.append("read elsewhere \(read.count)")
            case 62..<90:
                let limit = Int.random(in: 2...12, using: &rng)
                let page = await client.messages(conversation: conversation, limit: limit)
                if floor == nil, page.source.isFull, let oldest = page.messages.first?.createdAt { floor = oldest }
                history.append(
                    "sync limit \(limit): \(page.source) new \(page.newMessageIDs) deleted \(page.deletedMessageIDs)")
            case 90..<97:
                await client.close()
                client = try await launch()
                history.append("relaunch")
            default:
                let seconds = Int.random(in: 1...3, using: &rng)
                await server.advanceTime(by: .seconds(seconds))
                history.append("wait \(seconds) s")
            }
        }
        // Quiescence: no notification in flight, then a fresh client syncs.
        await client.close()
        client = try await launch()
        var last = await client.messages(conversation: conversation, limit: 12)
        if floor == nil, last.source.isFull, let oldest = last.messages.first?.createdAt { floor = oldest }
        for _ in 0..<3 where last.gapRemains {
            last = await client.messages(conversation: conversation, limit: 12)
        }
        await client.close()
        history.append(
            "final sync: \(last.source) new \(last.newMessageIDs) deleted \(last.deletedMessageIDs) gap \(last.gapRemains)"
        )

        var problems: [String] = []
        let serverIDs = await server.messageIDs(conversation: conversation)
        let serverSet = Set(serverIDs)
        let cached = try cache.newestMessages(conversationID: conversation, limit: .max).map(\.messageID)
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
        let redundant = await server.redundantReadMarks
        if !redundant.isEmpty { problems.append("marked read although own or already read: \(redundant)") }
        guard !problems.isEmpty else { return nil }
        return "seed \(seed): " + problems.joined(separator: "; ") + "\n  " + history.joined(separator: "\n  ")
    }
}
