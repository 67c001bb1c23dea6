import Foundation
import Testing
import TidingsCore
import TidingsKecalek
import TidingsSandbox

/// A reconnect refreshes only conversations still open, at most the configured number (issue 9).
@Suite(.timeLimit(.minutes(1))) struct KecalekOpenConversationTests {
    @Test func aReconnectRefreshesOnlyTheMostRecentlyOpenedConversations() async throws {
        let clock = TestClock()
        let server = KecalekSandboxServer(clock: clock)
        for id in ["a", "b", "c", "d"] {
            await server.createConversation(id, members: ["alice", "bob"])
            try await server.post(conversation: id, from: "bob", text: id)
        }
        let client = KecalekClient(
            configuration: .init(userID: "alice", reconnects: false, maximumOpenConversations: 2),
            transport: server.transport(userID: "alice"), cache: KecalekMemoryCache(), decryptor: server.cipher,
            clock: clock)
        try await client.connect()
        for id in ["a", "b", "c", "a"] { _ = await client.messages(conversation: id) }
        #expect(await client.refreshOpenConversations().map(\.conversationID) == ["c", "a"])
        await client.closeConversation("a")
        _ = await client.messages(conversation: "d", limit: 5, offset: 1)
        #expect(await client.refreshOpenConversations().map(\.conversationID) == ["c"])
        await client.close()
    }
}
