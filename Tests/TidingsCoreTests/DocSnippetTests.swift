import Foundation
import Testing
import TidingsCore

// The code of Sources/TidingsCore/Documentation.docc/GettingStarted.md, run as written: when an article's
// snippet stops compiling or stops doing what the article says, this fails. Keep the two in step.

/// Calls `fetch` until it succeeds, waiting a jittered, growing delay on `clock` between attempts.
private func fetchRetrying(
    clock: any Clock<Duration>, backoff: Backoff, fetch: () async throws -> String
) async throws -> String {
    var backoff = backoff
    while true {
        do {
            return try await fetch()
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            try await clock.sleep(for: backoff.nextDelay())
        }
    }
}

private actor FlakyServer {
    private var failuresLeft: Int
    init(failures: Int) { failuresLeft = failures }
    func fetch() throws -> String {
        if failuresLeft > 0 {
            failuresLeft -= 1
            throw URLError(.timedOut)
        }
        return "hello"
    }
}

@Suite(.timeLimit(.minutes(1))) struct CoreDocSnippetTests {
    @Test func openAStore() async throws {
        let directory = try StoreTemporaryDirectory()
        let storeURL = directory.url.appendingPathComponent("app.sqlite")

        let schema = SQLiteSchema(
            tables: [.durable("drafts")],
            migrations: [
                .init(version: 1, name: "create drafts") { db in
                    try db.execute("CREATE TABLE drafts(id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
                }
            ])
        let database = try await SQLiteDatabase.open(path: storeURL.path, schema: schema)
        try await database.write { db in
            try db.execute("INSERT INTO drafts(body) VALUES (?)", ["See you at eight"])
        }
        let drafts = try await database.read { db in
            try db.fetchAll(String.self, "SELECT body FROM drafts ORDER BY id")
        }

        #expect(drafts == ["See you at eight"])
        #expect(database.openReport.createdFile)
        #expect(database.openReport.migratedTo == 1)
        database.close()
    }

    @Test func retryWithBackoffOnAVirtualClock() async throws {
        let clock = TestClock()
        let server = FlakyServer(failures: 2)
        let backoff = Backoff(base: .seconds(1), cap: .seconds(60), random: { 0.5 })
        let task = Task { try await fetchRetrying(clock: clock, backoff: backoff) { try await server.fetch() } }
        let body = try await clock.run(until: task)

        #expect(body == "hello")
        #expect(clock.now.offset == .milliseconds(1500))
    }

    @Test func stayWithinAServersLimits() async throws {
        let clock = TestClock()
        let budget = RateBudget(configuration: .init(requestsPerWindow: 2, window: .seconds(60)), clock: clock)
        try await budget.acquire(host: "social.example")
        try await budget.acquire(host: "social.example")
        await budget.record(RateLimitSignal(statusCode: 429, retryAfter: "120"), host: "social.example")
        let third = Task { try await budget.acquire(host: "social.example") }
        try await clock.run(until: third)

        #expect(clock.now.offset == .seconds(120))
    }

    @Test func markersNeverMoveBack() throws {
        let marker = try MonotonicMarker(key: "home.read", storage: InMemoryMarkerStorage())
        #expect(try marker.advance(to: "109372890233022"))
        #expect(try !marker.advance(to: "99"))

        #expect(marker.value == "109372890233022")
        #expect(marker.refusedCount == 1)
    }
}
