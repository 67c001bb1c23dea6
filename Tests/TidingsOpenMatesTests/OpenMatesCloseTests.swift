import Foundation
import Testing
import TidingsCore
import TidingsSandbox

@testable import TidingsOpenMates

/// Closing the client is the app's doing, not the server's: it costs no action a try, and nothing the client
/// does to the store after ``OpenMatesClient/close()`` returns goes unannounced.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesCloseTests {
    /// A synced client on a store file at `path` whose one stored message is sent and left unanswered by the
    /// server, with a single try allowed: closing it is what decides the action's fate.
    private static func messageInFlight(path: String) async throws -> (
        OpenMatesSandboxServer, OpenMatesClientHarness, OpenMatesPendingAction
    ) {
        let server = OpenMatesSandboxServer()
        await server.seed(parents: 3)
        var variant = OpenMatesSandboxVariant()
        variant.unansweredActions = ["encrypted_chat_metadata"]
        await server.setVariant(variant)
        let harness = try OpenMatesClientHarness(
            server: server, store: OpenMatesStore(path: path), configuration: .init(maximumActionTries: 1))
        await harness.client.start()
        #expect(await harness.untilSynced())
        let queued = try await harness.client.sendMessage(
            chatID: "chat-001", messageID: "local-1", encryptedContent: "sealed", createdAt: 1_700_000_100)
        return (server, harness, queued)
    }

    /// A client whose action in flight has its last try left, closed before the server answers.
    ///
    /// Before the fix the connection's end, which `close()` causes, counted as a failed try: with one try
    /// allowed the action was abandoned, sometimes after `close()` had already finished the change stream, so the
    /// queue lost it and no subscriber heard of it (`OpenMatesModelTests`, seeds 66 and 666: "announced 0 times").
    @Test func closingWithAnActionInFlightKeepsItQueuedWithItsTries() async throws {
        let directory = try OpenMatesTemporaryDirectory()
        let (_, harness, queued) = try await Self.messageInFlight(path: directory.path("om.sqlite"))
        #expect(await eventually { await harness.server.received.map(\.type).contains("encrypted_chat_metadata") })

        await harness.client.close()
        var outcomes: [OpenMatesClient.Change] = []
        while await harness.until({ change in
            switch change {
            case .actionSucceeded, .actionFailed:
                outcomes.append(change)
                return true
            default: return false
            }
        }) {}
        // Whatever else runs now (the connection's end, a timeout) must not touch the queue any more.
        for _ in 0..<1_000 { await Task.yield() }
        await harness.clock.advance(by: .seconds(60))
        for _ in 0..<1_000 { await Task.yield() }

        #expect(outcomes.isEmpty)
        let pending = try harness.store.pendingActions()
        #expect(pending.map(\.id) == [queued.id])
        #expect(pending.first?.tries == 0)
        #expect(try harness.store.failedActions().isEmpty)
        harness.store.database.close()
    }

    /// An action kept by `close()` is sent again by the next launch on the same file and announced there once.
    @Test func anActionKeptByCloseIsReplayedAndAnnouncedAfterARelaunch() async throws {
        let directory = try OpenMatesTemporaryDirectory()
        let path = directory.path("om.sqlite")
        let (server, first, queued) = try await Self.messageInFlight(path: path)
        #expect(await eventually { await first.server.received.map(\.type).contains("encrypted_chat_metadata") })
        await first.client.close()
        first.store.database.close()

        await server.setVariant(OpenMatesSandboxVariant())
        let second = try OpenMatesClientHarness(server: server, store: OpenMatesStore(path: path))
        try #require(try second.store.pendingActions().map(\.id) == [queued.id])
        await second.client.start()
        var succeeded: [Int64] = []
        #expect(
            await second.until { change in
                if case .actionSucceeded(let action) = change { succeeded.append(action.id) }
                return !succeeded.isEmpty
            })
        #expect(succeeded == [queued.id])
        #expect(try second.store.pendingActions().isEmpty)
        #expect(await server.appliedActions == ["store_message:chat-001:local-1"])
        await second.client.close()
        second.store.database.close()
    }
}
