import Foundation
import TidingsCore
import TidingsMastodon

/// M1–M3 of issue 11: the polling scheduler's requests over a simulated day (MastodonPollBench.swift), one
/// refresh per timeline key, and page ingest with gap bookkeeping.
let mastodonSuite = BenchSuite(
    name: "mastodon", abstract: "Mastodon: a polling day, coalesced refreshes, page ingest with gap bookkeeping"
) { reporter in
    try await MastodonPollBench.run(reporter)
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("tidings-bench-mastodon-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    try await MastodonBench.coalescedRefreshes(reporter, directory: directory)
    try MastodonBench.ingestPages(reporter, directory: directory)
}

enum MastodonBench {
    static let account = "bench@example.social"
    static let home = MastodonTimelineKey.home(account: account)
    static let pageSize = 40
    static let timelineSize = 500
    /// A status's JSON is ~1–3 KB; 1.5 KB of payload per status.
    static let payload = Data(repeating: 0x61, count: 1536)

    static func page(_ ids: ClosedRange<Int>, hasMore: Bool) -> MastodonTimelinePage {
        MastodonTimelinePage(
            items: ids.reversed().map { .init(id: ServerID(String($0)), payload: payload) }, hasMore: hasMore)
    }

    // MARK: M2

    /// 100 concurrent refreshes of one timeline through `MastodonTimelineRefresher` against 100 callers that
    /// each fetch (no coalescing); the fetch stands for a 20 ms network round trip.
    static func coalescedRefreshes(_ reporter: BenchReporter, directory: URL) async throws {
        let callers = 100
        let requests = Counter()
        let database = try await SQLiteDatabase.open(
            path: directory.appendingPathComponent("m2.sqlite").path, schema: MastodonTimelineSchema.schema)
        let store = MastodonTimelineStore(database: database)
        let fetch: MastodonTimelineRefresher.Fetch = { _, plan in
            _ = requests.next()
            try await Task.sleep(for: .milliseconds(20))
            return page(1_000_001...1_000_040, hasMore: false)
        }
        let refresher = MastodonTimelineRefresher(store: store, fetch: fetch)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<callers { group.addTask { try await refresher.refresh(home) } }
            try await group.waitForAll()
        }
        let coalesced = requests.next() - 1

        let naiveRequests = Counter()
        let naiveStore = MastodonTimelineStore(
            database: try await SQLiteDatabase.open(
                path: directory.appendingPathComponent("m2-naive.sqlite").path, schema: MastodonTimelineSchema.schema))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<callers {
                group.addTask {
                    let plan = try await naiveStore.plan(.refresh, for: home, limit: pageSize)
                    _ = naiveRequests.next()
                    try await Task.sleep(for: .milliseconds(20))
                    try await naiveStore.apply(page(1_000_001...1_000_040, hasMore: false), for: plan, to: home)
                }
            }
            try await group.waitForAll()
        }
        let naive = naiveRequests.next() - 1
        reporter.report(
            BenchResult(
                id: "M2",
                name: "network requests for 100 concurrent refreshes of one timeline (baseline: no coalescing)",
                value: Double(coalesced), unit: "requests", baseline: Double(naive), note: "target: exactly 1"))
    }

    // MARK: M3

    /// Pages of 40 into a home timeline held at 500: each round a full `min_id` page (a gap goes in), a
    /// `max_id` page into that gap (it closes), and a sweep back to 500 — all through the store, each page one
    /// transaction on a file. Baseline: the same rows and trims with plain SQL (upsert the status, append the
    /// entry at the next position, delete the oldest), no planning, dedupe or gaps.
    static func ingestPages(_ reporter: BenchReporter, directory: URL) throws {
        let rounds = 100  // 200 pages per run
        var storeRates: [Double] = []
        var plainRates: [Double] = []
        for run in 0..<5 {
            storeRates.append(try storeRun(directory: directory, run: run, rounds: rounds))
            plainRates.append(try plainRun(directory: directory, run: run, rounds: rounds))
        }
        reporter.report(
            BenchResult(
                id: "M3", name: "ingest 40-status pages into a home timeline of 500 with gap bookkeeping (median of 5)",
                value: percentile(storeRates, 0.5), unit: "pages/s", baseline: percentile(plainRates, 0.5),
                note: "baseline: plain SQL inserts and trims without gap bookkeeping; higher is better"))
    }

    static func storeRun(directory: URL, run: Int, rounds: Int) throws -> Double {
        let database = try SQLiteDatabase(
            path: directory.appendingPathComponent("m3-store-\(run).sqlite").path, schema: MastodonTimelineSchema.schema
        )
        let store = MastodonTimelineStore(database: database)
        try database.write { db in
            let plan = try MastodonTimelinePlanner.plan(.refresh, entries: [], limit: timelineSize)
            try store.apply(page(1...timelineSize, hasMore: true), for: plan, to: home, in: db)
        }
        var next = 10_000
        var pages = 0
        let seconds = try measureSeconds {
            for _ in 0..<rounds {
                // The newest 40 above a hole of 40: a full min_id page leaves a gap.
                let top = (next + pageSize + 1)...(next + 2 * pageSize)
                try database.write { db in
                    let plan = try MastodonTimelinePlanner.plan(
                        .refresh, entries: try store.entries(home, in: db), limit: pageSize)
                    try store.apply(page(top, hasMore: true), for: plan, to: home, in: db)
                }
                // The hole's 40 plus the old top: the gap closes.
                try database.write { db in
                    let entries = try store.entries(home, in: db)
                    guard let gap = entries.first(where: \.isGap) else { throw BenchGapMissing() }
                    let plan = try MastodonTimelinePlanner.plan(
                        .loadGap(position: gap.position, side: .newer), entries: entries, limit: pageSize + 1)
                    let lower = entries.last(where: { !$0.isGap && $0.position < gap.position })?.statusID
                    var items = page((next + 1)...(next + pageSize), hasMore: true).items
                    if let lower { items.append(.init(id: lower, payload: payload)) }
                    let result = try store.apply(
                        MastodonTimelinePage(items: items, hasMore: true), for: plan, to: home, in: db)
                    guard result.gapClosed else { throw BenchGapMissing() }
                    try store.sweep(MastodonRetention(), in: db)
                }
                pages += 2
                next += 2 * pageSize
            }
        }
        let count = try database.read { db in try store.entries(home, in: db).count }
        guard count == timelineSize else { throw BenchGapMissing() }
        return Double(pages) / seconds
    }

    static func plainRun(directory: URL, run: Int, rounds: Int) throws -> Double {
        let database = try SQLiteDatabase(
            path: directory.appendingPathComponent("m3-plain-\(run).sqlite").path, schema: MastodonTimelineSchema.schema
        )
        var position: Int64 = 0
        func insert(_ ids: ClosedRange<Int>, in db: SQLiteConnection) throws {
            for id in ids {
                try db.execute(
                    "INSERT INTO mastodon_statuses(account, status_id, payload, fetched_at) VALUES (?, ?, ?, ?) "
                        + "ON CONFLICT(account, status_id) DO UPDATE SET payload = excluded.payload",
                    [account, String(id), payload, Int64(0)])
                position += 1
                try db.execute(
                    "INSERT INTO mastodon_timeline_entries(account, timeline, position, status_id) VALUES (?, ?, ?, ?)",
                    [account, home.timeline, position, String(id)])
            }
        }
        try database.write { db in try insert(1...timelineSize, in: db) }
        var next = 10_000
        var pages = 0
        let seconds = try measureSeconds {
            for _ in 0..<rounds {
                try database.write { db in try insert((next + 1)...(next + pageSize), in: db) }
                try database.write { db in
                    try insert((next + pageSize + 1)...(next + 2 * pageSize), in: db)
                    try db.execute(
                        "DELETE FROM mastodon_timeline_entries WHERE rowid IN (SELECT rowid FROM "
                            + "mastodon_timeline_entries WHERE account = ? AND timeline = ? ORDER BY position LIMIT ?)",
                        [account, home.timeline, Int64(2 * pageSize)])
                }
                pages += 2
                next += 2 * pageSize
            }
        }
        return Double(pages) / seconds
    }

    struct BenchGapMissing: Error, CustomStringConvertible {
        var description: String { "M3: the gap bookkeeping did not go as the benchmark expects" }
    }
}
