import Foundation
import Testing
import TidingsCore
import TidingsKecalek
import TidingsSandbox

// The code of Sources/TidingsKecalek/Documentation.docc/GettingStarted.md, run as written against the
// sandbox: when an article's snippet stops compiling or stops doing what the article says, this fails.

/// Opens the cache on a queue of its own: opening reads and may migrate the file.
private func openCache(path: String, key: TidingsCrypto.SymmetricKey) async throws -> KecalekSQLiteCache {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue(label: "app.kecalek.cache").async {
            continuation.resume(with: Result { try KecalekSQLiteCache(path: path, key: key) })
        }
    }
}

@Suite(.timeLimit(.minutes(1))) struct KecalekDocSnippetTests {
    /// "Build a client against the sandbox".
    private func sandboxClient() async throws -> (TestClock, KecalekSandboxServer, KecalekClient, KecalekMessagePage) {
        let clock = TestClock()
        let server = try await KecalekSandboxServer.sample(clock: clock)
        let client = KecalekClient(
            configuration: .init(userID: "alice"),
            transport: server.transport(userID: "alice"),
            cache: KecalekMemoryCache(),
            decryptor: server.cipher,
            clock: clock)
        try await client.connect()

        let page = await client.messages(conversation: "general")
        return (clock, server, client, page)
    }

    @Test func buildAClientAgainstTheSandbox() async throws {
        let (_, server, client, page) = try await sandboxClient()

        #expect(page.source == .full)
        #expect(page.messages.count == 50)
        // The sample's `general` holds msg-000001…msg-000120: the page is the newest 50, oldest first.
        #expect(page.messages.first?.messageID == "msg-000071")
        #expect(page.messages.last?.messageID == "msg-000120")
        #expect(await server.messageCount(conversation: "general") == 120)
        #expect(page.messages.last?.text?.isEmpty == false)
        let again = await client.messages(conversation: "general")
        #expect(again.source == .incremental)
        await client.close()
    }

    @Test func injectAClock() async throws {
        let (clock, server, client, _) = try await sandboxClient()

        let changes = client.changes
        await server.dropAllConnections()
        let missed = try await server.post(conversation: "general", from: "bob", text: "while you were away")
        _ = await clock.waitForSleepers(1)
        await clock.advance(by: .seconds(1))
        var refreshed: [String] = []
        for await change in changes {
            if case .refreshed(conversationID: "general", let newMessageIDs, _) = change {
                refreshed = newMessageIDs
                break
            }
        }

        #expect(refreshed == [missed.messageID])
        #expect(clock.now.offset == .seconds(1))
        await client.close()
    }

    @Test func readChanges() async throws {
        let (_, server, client, _) = try await sandboxClient()
        var text: String?

        let changes = client.changes
        var connection = await client.connectionState
        let posted = try await server.post(conversation: "general", from: "bob", text: "Lunch?")
        reading: for await change in changes {
            switch change {
            case .connection(let state):
                connection = state
            case .messagesStored(let conversationID, let messageIDs) where messageIDs.contains(posted.messageID):
                let newest = await client.messages(conversation: conversationID, limit: 1)
                text = newest.messages.last?.text
                break reading
            default:
                continue
            }
        }

        #expect(text == "Lunch?")
        #expect(connection == .connected)
        await client.close()
    }

    @Test func runItOverALoopbackWebSocket() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tidings-doc-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let cacheURL = directory.appendingPathComponent("kecalek.sqlite")
        let server = try await KecalekSandboxServer.sample(clock: TestClock())

        let endpoint = try KecalekSandboxWebSocketServer(server: server)
        defer { endpoint.stop() }
        let cache = try await openCache(path: cacheURL.path, key: TidingsCrypto.SymmetricKey.random())
        let client = KecalekClient(
            configuration: .init(userID: "alice"),
            transport: KecalekWebSocketTransport(url: endpoint.url, token: server.token(for: "alice")),
            cache: cache,
            decryptor: server.cipher,
            clock: ContinuousClock())
        try await client.connect()
        let page = await client.messages(conversation: "random")
        await client.close()

        #expect(page.source == .full)
        #expect(page.messages.count == 30)
        #expect(
            try await cache.database.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM kecalek_messages") }
                == 30)
        #expect(await server.connectionsAccepted == 1)
        // Sealed at rest: no message's text is in the file's bodies.
        let text = try #require(page.messages.last?.text)
        let bodies = try await cache.database.read { db in
            try db.fetchAll([UInt8].self, "SELECT body FROM kecalek_messages")
        }
        #expect(bodies.count == 30)
        #expect(!bodies.contains { Data($0).range(of: Data(text.utf8)) != nil })
    }
}
