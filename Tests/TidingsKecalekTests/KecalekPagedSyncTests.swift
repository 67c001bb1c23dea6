import Foundation
import Testing
import TidingsCore
import TidingsKecalek
import TidingsSandbox

/// An incremental sync writes page by page and a sync cut off continues where it stopped (issue 9): memory
/// bounded by one page, the sync point moved only when everything up to it is stored, and a backlog larger
/// than the page budget converging over several syncs instead of staying a reported gap.
@Suite(.timeLimit(.minutes(1))) struct KecalekPagedSyncTests {
    static let conversation = KecalekHarness.conversation
    static let me = KecalekHarness.me

    /// Opens the cache on a queue of its own: opening reads and may migrate the file.
    static func openCache(path: String, key: TidingsCrypto.SymmetricKey) async throws -> KecalekSQLiteCache {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue(label: "test.kecalek.cache").async {
                continuation.resume(with: Result { try KecalekSQLiteCache(path: path, key: key) })
            }
        }
    }

    static func client(
        _ server: KecalekSandboxServer, cache: any KecalekMessageCache, clock: TestClock,
        transport: (any KecalekTransport)? = nil, pages: Int = 20
    ) async throws -> KecalekClient {
        let client = KecalekClient(
            configuration: .init(userID: me, reconnects: false, maximumIncrementalPages: pages),
            transport: transport ?? server.transport(userID: me), cache: cache, decryptor: server.cipher,
            clock: clock)
        try await client.connect()
        return client
    }

    /// A server with 10 messages, a cache holding the newest 5 from a full fetch, then 23 posted while no
    /// client listens.
    static func backlog(
        _ variant: KecalekSandboxServer.Variant = .standard, cache: any KecalekMessageCache, clock: TestClock
    ) async throws -> KecalekSandboxServer {
        let server = KecalekSandboxServer(clock: clock)
        await server.createConversation(conversation, members: [me, "bob"])
        await server.setVariant(variant)
        try await server.seed(conversation: conversation, from: ["bob", me], count: 10)
        let first = try await client(server, cache: cache, clock: clock)
        _ = await first.messages(conversation: conversation, limit: 5)
        await first.close()
        for index in 0..<23 { try await server.post(conversation: conversation, from: "bob", text: "new \(index)") }
        return server
    }

    static func cachedIDs(_ cache: any KecalekMessageCache) throws -> [String] {
        try cache.newestMessages(conversationID: conversation, limit: .max).map(\.messageID)
    }

    @Test func anIncrementalSyncWritesEachPageInATransactionOfItsOwn() async throws {
        let clock = TestClock()
        let memory = KecalekMemoryCache()
        let server = try await Self.backlog(cache: memory, clock: clock)
        let counting = CountingCache(memory)
        let client = try await Self.client(server, cache: counting, clock: clock)
        let page = await client.messages(conversation: Self.conversation, limit: 5)
        await client.close()
        #expect(page.source.isIncremental)
        #expect(!page.gapRemains)
        #expect(page.newMessageIDs.count == 23)
        // The newest cached message comes again (asked from one tick early), so 24 upserts in pages of 5.
        #expect(counting.upsertsPerWrite == [5, 5, 5, 5, 4])
        #expect(try Self.cachedIDs(memory).count == 28)
    }

    @Test func aSyncCutOffBetweenPagesLeavesACacheThatTheNextSyncCompletesAfterAReopen() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("cache.sqlite").path
        let key = TidingsCrypto.SymmetricKey.random()
        let clock = TestClock()

        let server: KecalekSandboxServer
        let pointBefore: KecalekSyncState?
        let oldestCached: String
        do {
            let cache = try await Self.openCache(path: path, key: key)
            server = try await Self.backlog(cache: cache, clock: clock)
            oldestCached = try #require(try Self.cachedIDs(cache).first)
            // A cached message deleted meanwhile: only the completed sync may drop it.
            let doomed = try Self.cachedIDs(cache)[2]
            await server.delete(conversation: Self.conversation, messageID: doomed)
            pointBefore = try cache.syncState(conversationID: Self.conversation)

            let cutting = ResponseCuttingTransport(
                server.transport(userID: Self.me), before: 3, of: "get_messages")
            let client = try await Self.client(server, cache: cache, clock: clock, transport: cutting)
            let page = await client.messages(conversation: Self.conversation, limit: 5)
            await client.close()
            #expect(cutting.cut)
            #expect(page.source.cacheError == .connectionLost)
            // Two pages were stored (the repeated newest one and 9 new), the point did not move.
            #expect(try Self.cachedIDs(cache).count == 5 + 9)
            #expect(try cache.syncState(conversationID: Self.conversation) == pointBefore)
        }

        let reopened = try await Self.openCache(path: path, key: key)
        #expect(try reopened.syncState(conversationID: Self.conversation) == pointBefore)
        let client = try await Self.client(server, cache: reopened, clock: clock)
        let page = await client.messages(conversation: Self.conversation, limit: 5)
        await client.close()
        #expect(page.source.isIncremental)
        #expect(!page.gapRemains)
        let expected = await server.messageIDs(conversation: Self.conversation).filter { $0 >= oldestCached }
        #expect(try Self.cachedIDs(reopened) == expected)
        let newest = try #require(await server.message(conversation: Self.conversation, messageID: expected.last!))
        #expect(try reopened.syncState(conversationID: Self.conversation)?.point == newest.createdAt)
        #expect(await server.redundantReadMarks.isEmpty)
    }

    @Test func aBacklogLargerThanThePageBudgetConvergesOverSeveralSyncs() async throws {
        let clock = TestClock()
        let cache = KecalekMemoryCache()
        let server = try await Self.backlog(cache: cache, clock: clock)
        // Two pages of 5 per sync: 23 new messages need three syncs.
        var gaps: [Bool] = []
        var points: [KecalekTimestamp] = []
        for _ in 0..<6 {
            let client = try await Self.client(server, cache: cache, clock: clock, pages: 2)
            let page = await client.messages(conversation: Self.conversation, limit: 5)
            await client.close()
            gaps.append(page.gapRemains)
            points.append(try #require(try cache.syncState(conversationID: Self.conversation)?.point))
            if !page.gapRemains { break }
        }
        #expect(gaps == [true, true, false])
        #expect(points == points.sorted() && Set(points).count == points.count, "the point moves forward each time")
        let serverIDs = await server.messageIDs(conversation: Self.conversation)
        #expect(try Self.cachedIDs(cache) == Array(serverIDs.suffix(28)))
    }

    @Test func aNewestFirstBacklogLargerThanTheBudgetStaysAReportedGap() async throws {
        let clock = TestClock()
        let cache = KecalekMemoryCache()
        let server = try await Self.backlog(.init(pageOrder: .newestFirst), cache: cache, clock: clock)
        let before = try cache.syncState(conversationID: Self.conversation)
        for _ in 0..<3 {
            let client = try await Self.client(server, cache: cache, clock: clock, pages: 2)
            let page = await client.messages(conversation: Self.conversation, limit: 5)
            await client.close()
            // Nothing tells which messages lie between the point and the newest pages: never claimed current.
            #expect(page.gapRemains)
            #expect(try cache.syncState(conversationID: Self.conversation) == before)
        }
    }
}
