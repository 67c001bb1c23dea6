import Foundation
import Testing
import TidingsCore
import TidingsSandbox

@testable import TidingsOpenMates

/// The getting-started article's steps, against the sandbox in process.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesDocSnippetTests {
    @Test func gettingStarted() async throws {
        let directory = try OpenMatesTemporaryDirectory()
        let sandbox = OpenMatesSandboxServer()
        await sandbox.seed(parents: 14, messagesEach: 2)
        let endpoint = try OpenMatesSandboxWebSocketServer(server: sandbox)
        defer { endpoint.stop() }

        let store = try await OpenMatesStore.open(path: directory.path("om.sqlite"))
        let client = OpenMatesClient(
            transport: endpoint.inProcessTransport(token: sandbox.token),
            store: store, clock: ContinuousClock())
        #expect(try await client.coldStart().chats.isEmpty)
        let changes = client.changes()
        await client.start()
        for await change in changes {
            if case .status(let status) = change, status.sync == .complete { break }
        }
        let start = try await client.coldStart()
        #expect(start.chats.count == 14)
        #expect(try await client.openChat(start.chats[12].chatID) == .loading(partial: []))
        await client.close()
    }
}
