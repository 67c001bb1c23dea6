import Foundation
import Testing
import TidingsCore
import TidingsKecalek
import TidingsNet
import TidingsSandbox

// The code of Sources/TidingsSandbox/Documentation.docc/UsingSandboxes.md, run as written: when an
// article's snippet stops compiling or stops doing what the article says, this fails.

@Suite(.timeLimit(.minutes(1))) struct SandboxDocSnippetTests {
    @Test func testAnEngineAgainstTheSandboxAndInjectFaults() async throws {
        let clock = TestClock()
        let server = KecalekSandboxServer(clock: clock)
        await server.createConversation("team", members: ["alice", "bob"])
        try await server.seed(conversation: "team", from: ["bob", "alice"], count: 10)
        let client = KecalekClient(
            configuration: .init(userID: "alice"), transport: server.transport(userID: "alice"),
            cache: KecalekMemoryCache(), decryptor: server.cipher, clock: clock)
        try await client.connect()
        let first = await client.messages(conversation: "team")
        #expect(first.messages.count == 10)

        let gone = first.messages[0].messageID
        await server.delete(conversation: "team", messageID: gone)
        await server.clearLog()
        let changes = client.changes
        let second = await client.messages(conversation: "team")
        #expect(second.messages.count == 9)
        #expect(!second.messages.contains { $0.messageID == gone })
        var deleted = false
        for await change in changes {
            if case .messagesDeleted("team", let messageIDs) = change, messageIDs.contains(gone) {
                deleted = true
                break
            }
        }
        #expect(deleted)
        #expect(await server.requestLog.map(\.type) == ["get_messages", "get_deleted_since"])

        // "Inject faults".
        await server.inject(.errorStatus("internal_error"), on: "get_messages")
        let offline = await client.messages(conversation: "team")
        #expect(offline.source == .cache(KecalekError.server))
        #expect(offline.messages.count == 9)
        await client.close()
    }

    @Test func givePreviewsAndDemosLiveData() async throws {
        let server = try await KecalekSandboxServer.sample(clock: ContinuousClock())
        let endpoint = try KecalekSandboxWebSocketServer(server: server)
        defer { endpoint.stop() }
        let client = KecalekClient(
            configuration: .init(userID: "alice"),
            transport: KecalekWebSocketTransport(url: endpoint.url, token: server.token(for: "alice")),
            cache: KecalekMemoryCache(), decryptor: server.cipher, clock: ContinuousClock())
        try await client.connect()
        let page = await client.messages(conversation: "general")
        let changes = client.changes
        let posted = try await server.post(conversation: "general", from: "bob", text: "Hello from the sandbox")
        var stored = false
        for await change in changes {
            if case .messagesStored("general", let messageIDs) = change, messageIDs.contains(posted.messageID) {
                stored = true
                break
            }
        }
        await client.close()

        #expect(page.messages.count == 50)
        #expect(page.totalCount == 120)
        #expect(stored)
    }

    @Test func serveAnotherProtocolOnLoopback() async throws {
        let token = "sandbox-token"
        let echo = try LoopbackWebSocketServer(
            authorize: { request in request.headers["authorization"] == "Bearer \(token)" }
        ) { _, connection in
            do {
                for try await message in connection.messages {
                    if case .text(let text) = message { try await connection.send(text: text) }
                }
            } catch {
                await connection.close()
            }
        }
        defer { echo.stop() }

        #expect(echo.url.absoluteString == "ws://127.0.0.1:\(echo.port)/")
        var configuration = WebSocket.Configuration()
        configuration.headers = [("Authorization", "Bearer \(token)")]
        let socket = try await WebSocket.connect(to: echo.url, configuration: configuration)
        try await socket.send(text: "ping")
        var iterator = socket.messages.makeAsyncIterator()
        #expect(try await iterator.next() == .text("ping"))
        await socket.close()
        await #expect(throws: (any Error).self) {
            _ = try await WebSocket.connect(to: echo.url, configuration: WebSocket.Configuration())
        }
    }
}
