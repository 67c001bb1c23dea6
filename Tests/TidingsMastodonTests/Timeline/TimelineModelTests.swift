import Foundation
import PeerSupport
import Testing
import TidingsCore

@testable import TidingsMastodon

/// Model-based test of the timeline store alone: random pages (cold, `min_id`, `max_id`, gap loads from
/// either side; full, short, with and without a `Link` header, with server-side filters and a feed cap),
/// posts, deletions (told to the client or missed while offline), stale pages that carry a status deleted
/// meanwhile, edits and sweeps, against ``TimelineModelServer``. After every step: no duplicate status,
/// positions strictly ordered with the server's order, no gap at the bottom or beside another (an open gap on
/// top only: newer statuses remain; after a refresh that inserted, nothing newer may remain without it), every hole
/// between cached runs is a gap entry, no resurrected deletion. At the end, loading every gap and refreshing
/// must converge to the server's newest status with every gap closed or unfillable.
///
/// `TIDINGS_MASTODON_MODEL_CASES=N` runs N seeds (1,000 by default), `TIDINGS_MASTODON_MODEL_SEED=S` starts
/// at seed S; a failure prints its seed and history.
@Suite(.timeLimit(.minutes(5))) struct TimelineModelTests {
    static var caseCount: Int {
        ProcessInfo.processInfo.environment["TIDINGS_MASTODON_MODEL_CASES"].flatMap { Int($0) } ?? 1000
    }

    static var firstSeed: UInt64 {
        ProcessInfo.processInfo.environment["TIDINGS_MASTODON_MODEL_SEED"].flatMap { UInt64($0) } ?? 0x7137_0000
    }

    @Test func randomPagesDeletionsEditsAndSweepsKeepTheInvariants() async throws {
        let count = Self.caseCount
        let first = Self.firstSeed
        // SQLite work is synchronous: it runs on a thread of its own, never on the cooperative pool.
        let failure = try await onDedicatedThread("timeline-model") { () -> String? in
            for index in 0..<count {
                let seed = first &+ UInt64(index)
                if let failure = try Self.runCase(seed: seed) { return failure }
            }
            return nil
        }
        if let failure { Issue.record(Comment(rawValue: failure)) }
    }

    static let key = MastodonTimelineKey.home(account: "model@example.social")

    /// Runs one seed; nil when every invariant held, else the failure with its seed and history.
    static func runCase(seed: UInt64) throws -> String? {
        var rng = SplitMix64(seed: seed)
        let limit = Int.random(in: 2...6, using: &rng)
        var server = TimelineModelServer(rng: &rng, limit: limit)
        let database = try SQLiteDatabase.inMemory(schema: MastodonTimelineSchema.schema)
        let store = MastodonTimelineStore(database: database)
        var told = Set<Int>()  // deletions the client was told about
        var history = [
            "seed \(seed): limit \(limit), feed cap \(server.feedCap), link \(server.sendsLink), filters \(server.filters)"
        ]
        var retention = MastodonRetention()
        retention.homeEntries = Int.random(in: (limit * 3)...(limit * 10), using: &rng)
        retention.maxRowsPerPass = Int.random(in: 1...20, using: &rng)
        server.post(Int.random(in: 0...(limit * 3), using: &rng), rng: &rng)

        var lastPlan: MastodonTimelineFetchPlan?
        @discardableResult
        func fetchAndApply(_ request: MastodonTimelineRequest, in db: SQLiteConnection) throws
            -> MastodonTimelineApplyResult?
        {
            let plan: MastodonTimelineFetchPlan
            do {
                // The store's plan: the planner's, started from a `Link` cursor where one applies.
                plan = try store.plan(request, for: key, limit: limit, in: db)
            } catch let error as MastodonTimelineError {
                history.append("\(request): \(error)")
                return nil
            }
            lastPlan = plan
            let answer = server.answer(plan)
            var fetched = page(answer.ids, hasMore: answer.hasMore)
            fetched.newerCursor = answer.newest.map { ServerID(String($0)) }
            fetched.olderCursor = answer.oldest.map { ServerID(String($0)) }
            let result = try store.apply(fetched, for: plan, to: key, in: db)
            history.append(
                "\(request) \(plan.anchor) → \(answer.ids) more \(String(describing: answer.hasMore)): \(result)")
            return result
        }

        let steps = Int.random(in: 10...40, using: &rng)
        for _ in 0..<steps {
            do {
                try step()
            } catch let failure as ModelFailure {
                return (history + ["INVARIANT: \(failure)"]).joined(separator: "\n")
            }
            if let problem = try check(store: store, server: server, told: told) {
                return (history + ["INVARIANT: \(problem)"]).joined(separator: "\n")
            }
        }

        func step() throws {
            try database.write { db in
                switch Int.random(in: 0..<100, using: &rng) {
                case 0..<25:
                    let result = try fetchAndApply(.refresh, in: db)
                    // What a refresh leaves missing above it must be marked: `min_id` pages are the rows just
                    // above the cache, so after a full one the newer rows lie above the page, behind a gap on top.
                    let entries = try store.entries(key, in: db)
                    let top = entries.last(where: { !$0.isGap })?.statusID.flatMap { Int($0.rawValue) }
                    // (A refresh of an empty timeline whose newest page was filtered empty goes downwards first.)
                    if let result, result.inserted > 0, let top, entries.last?.content != .gap(.open),
                        case .newer = lastPlan?.anchor,
                        let missed = server.feed.first(where: { $0 > top && !server.hidden($0) })
                    {
                        throw ModelFailure("silent hole above the refreshed top \(top): \(missed) and newer remain")
                    }
                case 25..<35:
                    try fetchAndApply(.loadOlder, in: db)
                case 35..<55:
                    let gaps = try store.entries(key, in: db).filter { $0.content == .gap(.open) }
                    guard let gap = gaps.randomElement(using: &rng) else { return }
                    let side: MastodonGapSide = Bool.random(using: &rng) ? .newer : .older
                    try fetchAndApply(.loadGap(position: gap.position, side: side), in: db)
                case 55..<75:
                    let count = Int.random(in: 0...(limit * 3), using: &rng)
                    server.post(count, rng: &rng)
                    history.append("post \(count)")
                case 75..<85:
                    guard let victim = server.live.randomElement(using: &rng) else { return }
                    server.live.removeAll { $0 == victim }
                    if Bool.random(using: &rng) {
                        try store.delete(account: key.account, id: ServerID(String(victim)), in: db)
                        told.insert(victim)
                        history.append("delete \(victim) (told)")
                    } else {
                        history.append("delete \(victim) (missed offline)")
                    }
                case 85..<90:
                    // A page fetched before a deletion lands after it.
                    let entries = try store.entries(key, in: db)
                    let plan = try MastodonTimelinePlanner.plan(.refresh, entries: entries, limit: limit)
                    let answer = server.answer(plan)
                    guard let victim = answer.ids.randomElement(using: &rng) else { return }
                    server.live.removeAll { $0 == victim }
                    try store.delete(account: key.account, id: ServerID(String(victim)), in: db)
                    told.insert(victim)
                    let result = try store.apply(page(answer.ids, hasMore: answer.hasMore), for: plan, to: key, in: db)
                    history.append("stale page \(answer.ids) after delete \(victim): \(result)")
                case 90..<95:
                    let cached = try store.entries(key, in: db).compactMap(\.statusID)
                    guard let id = cached.randomElement(using: &rng) else { return }
                    try store.edit(account: key.account, id: id, payload: Data("edit".utf8), in: db) { old, new in
                        new + old
                    }
                    guard try store.status(account: key.account, id: id, in: db)?.edited == true else {
                        throw ModelFailure("edit of \(id) not marked edited")
                    }
                    history.append("edit \(id)")
                default:
                    let report = try store.sweep(retention, in: db)
                    history.append("sweep \(report)")
                }
            }
        }
        // Quiescence: refresh and load every open gap until nothing changes.
        for _ in 0..<(server.live.count + 10) {
            var changed = false
            try database.write { db in
                let before = try store.entries(key, in: db)
                let refreshed = try fetchAndApply(.refresh, in: db)
                if let gap = try store.entries(key, in: db).first(where: { $0.content == .gap(.open) }) {
                    try fetchAndApply(.loadGap(position: gap.position, side: .newer), in: db)
                }
                // A page filtered empty moves only the cursor: that is progress too.
                changed = try store.entries(key, in: db) != before || refreshed?.cursorMoved == true
            }
            if let problem = try check(store: store, server: server, told: told) {
                return (history + ["INVARIANT: \(problem)"]).joined(separator: "\n")
            }
            if !changed { break }
        }
        let entries = try database.read { db in try store.entries(key, in: db) }
        if entries.contains(where: { $0.content == .gap(.open) }) {
            return (history + ["QUIESCENCE: an open gap remains: \(entries)"]).joined(separator: "\n")
        }
        let top = entries.last?.statusID.flatMap { Int($0.rawValue) }
        // Pages the server filtered empty no longer stall the top: the `Link` cursor moves past them.
        if let newest = server.feed.last(where: { !server.hidden($0) }), (top ?? .min) < newest {
            // A status deleted while offline may still be on top (re-checking finds those, not this store).
            return (history + ["QUIESCENCE: the newest status \(newest) is not on top: \(entries)"])
                .joined(separator: "\n")
        }
        return nil
    }

    struct ModelFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    static func page(_ ids: [Int], hasMore: Bool?) -> MastodonTimelinePage {
        MastodonTimelinePage(
            items: ids.map { .init(id: ServerID(String($0)), payload: Data("s\($0)".utf8)) }, hasMore: hasMore)
    }

    /// The invariants after a step; a description of the first one broken, or nil.
    static func check(store: MastodonTimelineStore, server: TimelineModelServer, told: Set<Int>) throws -> String? {
        let entries = try store.database.read { db in try store.entries(key, in: db) }
        var seen = Set<Int>()
        var previousStatus: Int?
        var previousWasGap = true
        for (index, entry) in entries.enumerated() {
            if index > 0, entries[index - 1].position >= entry.position { return "positions not strictly rising" }
            guard let raw = entry.statusID, let id = Int(raw.rawValue) else {
                if previousWasGap { return "a gap at the bottom or beside another gap at \(entry.position)" }
                // An open gap on top says newer statuses remain (a full refresh page); anything else on top is
                // a gap the store should have dropped.
                if index == entries.count - 1, entry.content != .gap(.open) { return "an unfillable gap on top" }
                previousWasGap = true
                continue
            }
            if !seen.insert(id).inserted { return "status \(id) twice" }
            if told.contains(id) { return "deleted status \(id) resurrected" }
            if let previous = previousStatus {
                if previous >= id { return "status \(id) above \(previous): not the server's order" }
                if !previousWasGap, let hole = server.visible.first(where: { $0 > previous && $0 < id }) {
                    return "silent hole: \(hole) missing between \(previous) and \(id) with no gap"
                }
            }
            previousStatus = id
            previousWasGap = false
        }
        return nil
    }
}
