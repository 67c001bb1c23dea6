import Foundation
import TidingsCore
import TidingsKecalek
import TidingsSandbox

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// K1–K3: wire bytes of an incremental reopen, opening from a large cache, applying a large fetch.
let kecalekSuite = BenchSuite(
    name: "kecalek",
    abstract: "Kecalek: K1 reopen bytes, K2 open from a 100k-message cache, K3 apply a 10k-message fetch."
) { reporter in
    try await kecalekK1(reporter)
    try await kecalekK1(reporter, style: .seconds, spacing: .seconds(10))
    try await kecalekK1(reporter, style: .seconds)
    try await kecalekK3(reporter)
    try await kecalekK2(reporter)
}

/// A transport with no network: the engine answers from its cache.
private struct OfflineTransport: KecalekTransport {
    func connect() async throws -> KecalekChannel { throw KecalekError.notConnected }
}

private func kecalekClient(_ server: KecalekSandboxServer, cache: any KecalekMessageCache) -> KecalekClient {
    KecalekClient(
        configuration: .init(userID: "alice", requestTimeout: .seconds(300), reconnects: false),
        transport: server.transport(userID: "alice"), cache: cache, decryptor: server.cipher, clock: ContinuousClock())
}

/// K1: reopen a conversation of 50 cached messages with 2 new ones, against the full fetch of 50.
///
/// With `style: .seconds` the server writes `created_at` in whole seconds (a one-second-resolution server).
/// The 50 cached messages are 1 ms apart unless `spacing` spreads them out. Against a one-second server the
/// reopen asks again for the second of its sync point (a message posted later in that second must not be
/// lost), so a burst of 50 in one second is fetched again: that row is the worst case, the spaced one the
/// usual one.
private func kecalekK1(
    _ reporter: BenchReporter, style: KecalekTimestamp.Style = .fractional, spacing: Duration? = nil
) async throws {
    let server = KecalekSandboxServer(clock: ContinuousClock())
    await server.setTimestampStyle(style)
    await server.createConversation("general", members: ["alice", "bob", "carol"])
    if let spacing {
        let senders = ["bob", "carol", "alice"]
        for index in 0..<50 {
            await server.advanceTime(by: spacing)
            _ = try await server.post(
                conversation: "general", from: senders[index % 3],
                text: KecalekSandboxServer.sampleText(index, length: 120))
        }
    } else {
        try await server.seed(conversation: "general", from: ["bob", "carol", "alice"], count: 50)
    }
    let cache = try KecalekSQLiteCache(path: ":memory:", key: TidingsCrypto.SymmetricKey.random())
    let first = kecalekClient(server, cache: cache)
    try await first.connect()
    let full = await first.messages(conversation: "general", limit: 50)
    await first.close()
    await server.advanceTime(by: .seconds(300))
    try await server.post(conversation: "general", from: "bob", text: "Jste tu ještě? Za pět minut začínáme.")
    try await server.post(conversation: "general", from: "carol", text: "Jo, už jdu.")
    let second = kecalekClient(server, cache: cache)
    try await second.connect()
    let reopen = await second.messages(conversation: "general", limit: 50)
    await second.close()
    guard case .full = full.source, case .incremental = reopen.source, reopen.newMessageIDs.count == 2 else {
        throw KecalekError.server
    }
    reporter.report(
        BenchResult(
            id: style == .seconds ? (spacing == nil ? "K1.seconds.burst" : "K1.seconds") : "K1",
            name: "bytes on the wire to reopen a conversation (50 cached, 2 new) vs full fetch of 50"
                + (style == .seconds ? ", one-second-resolution server" : "")
                + (style == .seconds ? (spacing == nil ? ", the 50 sent within one second" : ", 10 s apart") : ""),
            value: Double(reopen.traffic.totalBytes), unit: "bytes", baseline: Double(full.traffic.totalBytes),
            note: "target ratio ≤ 0.10; both directions, JSON text; reopen = "
                + reopen.traffic.requests.map(\.type).joined(separator: "+") + ", full = "
                + full.traffic.requests.map(\.type).joined(separator: "+")))
}

/// K2: the newest 50 of one conversation, decrypted, from a cache of 100,000 messages in 1,000 conversations.
private func kecalekK2(_ reporter: BenchReporter) async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kecalek-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let cache = try KecalekSQLiteCache(
        path: directory.appendingPathComponent("k2.sqlite").path, key: TidingsCrypto.SymmetricKey.random())
    let conversations = 1_000
    let perConversation = 100
    let filler = String(repeating: "Ahoj, jak se máš? ", count: 7)
    let start: Int64 = 1_771_192_800_000_000
    let fill = try measureSeconds {
        for conversation in 0..<conversations {
            try cache.write { writer in
                for index in 0..<perConversation {
                    let payload: JSONValue = ["text": .string("#\(index) \(filler)")]
                    _ = try writer.upsert(
                        KecalekMessage(
                            messageID: "m-\(conversation)-\(index)", conversationID: "c-\(conversation)",
                            senderID: index % 2 == 0 ? "bob" : "alice",
                            createdAt: KecalekTimestamp(
                                microseconds: start + Int64(index * conversations + conversation) * 1000),
                            payload: payload.jsonData(sortedKeys: true),
                            reactions: index % 10 == 0 ? [.init(userID: "bob", emoji: "👍")] : []))
                }
            }
        }
    }
    var generator = SystemRandomNumberGenerator()
    var samples: [Double] = []
    var baseline: [Double] = []
    for _ in 0..<50 { _ = try cache.newestMessages(conversationID: "c-0", limit: 50) }
    // The IDs are only in the sealed bodies: the baseline reads a random conversation's rows by its tag.
    let conversationTags = try await cache.database.read { db in
        try db.fetchAll([UInt8].self, "SELECT DISTINCT conversation_tag FROM kecalek_messages")
    }
    for _ in 0..<2_000 {
        let conversation = "c-\(Int.random(in: 0..<conversations, using: &generator))"
        var count = 0
        samples.append(
            try measureSeconds {
                let page = try cache.newestMessages(conversationID: conversation, limit: 50)
                count = page.count
            } * 1000)
        guard count == 50 else { throw KecalekError.cache }
        let tag = conversationTags[Int.random(in: 0..<conversationTags.count, using: &generator)]
        baseline.append(
            try measureSeconds {
                try cache.database.read { db in
                    var bytes = 0
                    try db.forEachRow(
                        """
                        SELECT created_us, message_tag, body FROM kecalek_messages
                        WHERE conversation_tag = ? ORDER BY created_us DESC LIMIT 50
                        """, [tag]
                    ) { row in
                        let body: [UInt8] = try row[2]
                        bytes += body.count
                    }
                    count = bytes
                }
            } * 1000)
    }
    // The same through the engine, offline: `messages(conversation:)` answering from the cache.
    let client = KecalekClient(
        configuration: .init(userID: "alice", reconnects: false), transport: OfflineTransport(), cache: cache,
        decryptor: KecalekAESGCMCipher(keys: [:]), clock: ContinuousClock())
    var engine: [Double] = []
    for _ in 0..<2_000 {
        let conversation = "c-\(Int.random(in: 0..<conversations, using: &generator))"
        let clock = ContinuousClock()
        let started = clock.now
        let page = await client.messages(conversation: conversation)
        let elapsed = started.duration(to: clock.now)
        guard page.messages.count == 50 else { throw KecalekError.cache }
        engine.append(elapsed.inSeconds * 1000)
    }
    let note =
        "cache of \(conversations * perConversation) messages in \(conversations) conversations (filled in "
        + String(format: "%.1f s", fill) + "); baseline = the same SELECT reading the sealed blobs without decrypting"
    reporter.report(
        BenchResult(
            id: "K2", name: "open from a 100k-message cache: newest 50 decrypted, p50", value: percentile(samples, 0.5),
            unit: "ms", baseline: percentile(baseline, 0.5), note: "target p50 ≤ 2 ms; " + note))
    reporter.report(
        BenchResult(
            id: "K2.engine", name: "open through KecalekClient.messages offline (cache answers), p50",
            value: percentile(engine, 0.5), unit: "ms", baseline: percentile(samples, 0.5),
            note: "baseline = the cache read alone (K2); p99 "
                + String(format: "%.2f ms", percentile(engine, 0.99))))
    reporter.report(
        BenchResult(
            id: "K2.p99", name: "open from a 100k-message cache: newest 50 decrypted, p99",
            value: percentile(samples, 0.99), unit: "ms", baseline: percentile(baseline, 0.99), note: note))
}

/// K3: apply a 10,000-message full fetch to the store, streamed in pages, against one 10,000-message page.
private func kecalekK3(_ reporter: BenchReporter) async throws {
    let count = 10_000
    let server = KecalekSandboxServer(clock: ContinuousClock())
    await server.createConversation("big", members: ["alice", "bob"])
    try await server.seed(conversation: "big", from: ["bob", "alice"], count: count)

    func run(_ body: (KecalekClient) async -> Int) async throws -> (rate: Double, peakMiB: Double) {
        let cache = try KecalekSQLiteCache(path: ":memory:", key: TidingsCrypto.SymmetricKey.random())
        let client = kecalekClient(server, cache: cache)
        try await client.connect()
        let sampler = RSSSampler()
        var stored = 0
        let seconds = await measureSecondsAsync { stored = await body(client) }
        let peak = sampler.stop()
        await client.close()
        guard stored == count, try cache.messageCount(conversationID: "big") == count else { throw KecalekError.cache }
        return (Double(count) / seconds, peak)
    }
    let streamed = try await run { client in await client.fetchAll(conversation: "big", pageSize: 500).stored }
    let onePage = try await run { client in await client.messages(conversation: "big", limit: count).newMessageIDs.count
    }
    reporter.report(
        BenchResult(
            id: "K3", name: "apply a 10,000-message full fetch to the store (pages of 500)", value: streamed.rate,
            unit: "messages/s", baseline: onePage.rate,
            note: "baseline = the same fetch as one 10,000-message page; decrypt + seal at rest + SQLite"))
    reporter.report(
        BenchResult(
            id: "K3.mem", name: "peak RSS growth while applying the 10,000-message fetch (pages of 500)",
            value: streamed.peakMiB, unit: "MiB", baseline: onePage.peakMiB,
            note: "sampled from /proc/self/statm every 2 ms; baseline = one 10,000-message page"))
}

/// Samples the resident set size every 2 ms on a timer of its own queue (no thread sleeps, nothing on the
/// cooperative pool) and reports the peak growth.
private final class RSSSampler {
    private struct State {
        var peak = 0
        var running = true
    }
    private let state: LockedState<State>
    private let start: Int
    private let timer: any DispatchSourceTimer

    init() {
        start = Self.residentBytes()
        let state = LockedState(State(peak: start))
        self.state = state
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "tidings-bench.rss"))
        timer.schedule(deadline: .now(), repeating: .milliseconds(2))
        timer.setEventHandler {
            let now = Self.residentBytes()
            state.withLock { locked in
                if locked.running { locked.peak = max(locked.peak, now) }
            }
        }
        timer.resume()
    }

    deinit { timer.cancel() }

    /// Stops sampling; returns the peak growth over the start, in MiB.
    func stop() -> Double {
        let now = Self.residentBytes()
        timer.cancel()
        return state.withLock { locked in
            locked.running = false
            locked.peak = max(locked.peak, now)
            return Double(locked.peak - start) / 1_048_576
        }
    }

    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
