import Foundation
import Testing
import TidingsCore
import TidingsSandbox

@testable import TidingsOpenMates

/// Phase 3 on the app's request: through the one `phased_sync_request` path, progress until `is_last_batch`,
/// duplicates counted once; startup still asks for `all` only.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesBackgroundSyncTests {
    /// The statuses up to the one whose phase 3 finished.
    private static func untilFinished(_ harness: OpenMatesClientHarness) async -> [OpenMatesSyncStatus.BackgroundSync] {
        var seen: [OpenMatesSyncStatus.BackgroundSync] = []
        _ = await harness.untilStatus { status in
            if seen.last != status.backgroundSync { seen.append(status.backgroundSync) }
            if case .finished = status.backgroundSync { return status.sync == .complete }
            return false
        }
        return seen
    }

    /// A client synced (`all`) with a server of 35 parents of 2 messages each under `variant`.
    private static func synced35(_ variant: OpenMatesSandboxVariant) async throws -> OpenMatesClientHarness {
        let harness = try OpenMatesClientHarness()
        await harness.server.seed(parents: 35, messagesEach: 2)
        await harness.server.setVariant(variant)
        await harness.client.start()
        #expect(await harness.untilSynced())
        return harness
    }

    @Test(arguments: [false, true])
    func phase3OnRequestFillsTheRestBatchByBatchUntilTheLast(duplicates: Bool) async throws {
        var variant = OpenMatesSandboxVariant()
        variant.duplicateDeliveries = duplicates
        let harness = try await Self.synced35(variant)
        // Startup: `all` only, no phase 3.
        #expect(await harness.received("phased_sync_request").map { $0.payload["phase"] } == ["all"])
        #expect(await harness.sent("background_message_sync").isEmpty)
        #expect(await harness.client.status.backgroundSync == .idle)
        let metadataOnly = try harness.store.chatList().filter {
            (try? harness.store.chat($0.chatID)?.content.messagesV) == nil
        }
        #expect(metadataOnly.count == 25)

        #expect(await harness.client.requestBackgroundSync())
        let seen = await Self.untilFinished(harness)
        // Statuses of the first sync (idle) may still be buffered before the request's.
        #expect(
            Array(seen.drop { $0 == .idle })
                == [.running(batches: 0), .running(batches: 1), .running(batches: 2), .finished(batches: 3)])
        let requests = await harness.received("phased_sync_request")
        #expect(requests.map { $0.payload["phase"] } == ["all", "phase3"])
        // The full client state, as every request carries.
        #expect(requests[1].payload["client_chat_ids"]?.arrayValue?.count == 35)
        #expect(requests[1].payload["client_chat_versions"]?.objectValue?.count == 35)
        #expect(requests[1].payload["client_suggestions_count"] != nil)
        #expect(requests[1].payload["client_embed_ids"] != nil)
        #expect(await harness.sent("background_message_sync").count == (duplicates ? 6 : 3))
        for chat in metadataOnly {
            #expect(try harness.store.messages(chatID: chat.chatID).count == 2, "\(chat.chatID)")
            guard case .loaded = try await harness.client.openChat(chat.chatID) else {
                Issue.record("\(chat.chatID) not loaded after phase 3")
                continue
            }
        }
        #expect(await harness.received("request_chat_content_batch").isEmpty)
        await harness.client.close()
    }

    /// The real handler's phase 3 does not skip phase 1b's chats (seeds README): those arrive again, up to date,
    /// and change nothing; the rest is filled as from the sandbox's default phase 3.
    @Test func aPhase3RepeatingThePhase1bChatsChangesNothingOfThemAndFillsTheRest() async throws {
        var variant = OpenMatesSandboxVariant()
        variant.phase3RepeatsContentPhaseChats = true
        let harness = try await Self.synced35(variant)
        let chats = try harness.store.chatList()
        let complete = try chats.filter { try harness.store.chat($0.chatID)?.content.messagesV != nil }
        #expect(complete.count == 10)
        let before = try complete.map { try harness.store.messages(chatID: $0.chatID) }
        let contentBefore = try complete.map { try harness.store.chat($0.chatID)?.content }
        #expect(await harness.client.requestBackgroundSync())
        #expect(await Self.untilFinished(harness).last == .finished(batches: 4))
        #expect(try complete.map { try harness.store.messages(chatID: $0.chatID) } == before)
        #expect(try complete.map { try harness.store.chat($0.chatID)?.content } == contentBefore)
        for chat in chats {
            guard case .loaded = try await harness.client.openChat(chat.chatID) else {
                Issue.record("\(chat.chatID) not loaded after phase 3")
                continue
            }
        }
        #expect(await harness.received("request_chat_content_batch").isEmpty)
        await harness.client.close()
    }

    /// A phase 3 the connection cut is not lost: the reconnect asks for `all` first (the startup contract), and
    /// once that sync is complete asks for phase 3 again, until its last batch. A finished phase 3 is not asked for
    /// again by later reconnects, and a new client (a relaunch) starts with `all` only.
    @Test func aReconnectAsksForAllThenResumesAPhase3TheConnectionCut() async throws {
        var variant = OpenMatesSandboxVariant()
        variant.withheldEvents = ["background_message_sync", "phased_sync_complete"]
        let harness = try OpenMatesClientHarness()
        await harness.server.seed(parents: 15)
        await harness.client.start()
        #expect(await harness.untilSynced())
        await harness.server.setVariant(variant)
        #expect(await harness.client.requestBackgroundSync())
        #expect(await harness.untilStatus { $0.backgroundSync == .running(batches: 0) && $0.sync == .pending })
        await harness.server.setVariant(OpenMatesSandboxVariant())
        await harness.server.dropAllConnections()
        #expect(await harness.untilStatus { $0.connectionStatus == .reconnecting(attempt: 1) })
        // Offline: nothing to send it on.
        #expect(await harness.client.requestBackgroundSync() == false)
        #expect(await harness.clock.waitForSleepers(1))
        await harness.clock.advance(by: .seconds(1))
        #expect(await Self.untilFinished(harness).last == .finished(batches: 1))
        #expect(
            await harness.received("phased_sync_request").map { $0.payload["phase"] } == [
                "all", "phase3", "all", "phase3",
            ])
        // Finished: the next reconnect asks for `all` only.
        await harness.server.dropAllConnections()
        #expect(await harness.untilStatus { $0.connectionStatus == .reconnecting(attempt: 1) })
        #expect(await harness.advanceToNextDeadline())
        #expect(await harness.untilStatus { $0.connectionStatus == .connected && $0.sync == .complete })
        #expect(await harness.client.status.backgroundSync == .idle)
        #expect(await harness.received("phased_sync_request").map { $0.payload["phase"] }.suffix(1) == ["all"])
        await harness.client.close()
        #expect(await harness.client.requestBackgroundSync() == false)
    }
}
