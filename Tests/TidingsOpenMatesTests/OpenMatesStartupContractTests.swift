import Foundation
import Testing
import TidingsCore
import TidingsSandbox

@testable import TidingsOpenMates

/// The web client's startup contract and the document's Mac checklist items this increment covers, against
/// the sandbox in process.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesStartupContractTests {
    @Test func startupSendsOnePhasedSyncAllWithTheFullClientStateAndNothingOfPhase3() async throws {
        let harness = try OpenMatesClientHarness()
        await harness.server.seed(parents: 15, messagesEach: 3, subChatsOfNewest: 2)
        await harness.client.start()
        #expect(await harness.untilSynced())
        let requests = await harness.received("phased_sync_request")
        #expect(requests.count == 1)
        let payload = try #require(requests.first?.payload)
        #expect(payload["phase"] == "all")
        for key in ["client_chat_versions", "client_chat_ids", "client_suggestions_count", "client_embed_ids"] {
            #expect(payload[key] != nil, "missing \(key)")
        }
        #expect(await harness.server.received.allSatisfy { $0.type != "background_message_sync" })
        #expect(await harness.sent("background_message_sync").isEmpty)
        #expect(await harness.client.traffic.sent["phased_sync_request"] == 1)
    }

    @Test func phase2CarriesNoContentAndPhase1bAtMostTenParents() async throws {
        let harness = try OpenMatesClientHarness()
        await harness.server.seed(parents: 15, messagesEach: 3, subChatsOfNewest: 2)
        await harness.client.start()
        #expect(await harness.untilSynced())
        for frame in await harness.sent("phase_2_last_20_chats_ready") {
            let forbidden = ["messages", "embeds", "embed_keys", "code_run_outputs", "compression_checkpoints"]
            #expect(forbidden.allSatisfy { frame.payload[$0] == nil })
            for chat in frame.payload["chats"]?.arrayValue ?? [] {
                #expect(forbidden.allSatisfy { chat[$0] == nil && chat["chat_details"]?[$0] == nil })
            }
        }
        let phase1b = try #require(await harness.sent("phase_1b_chat_content_ready").first)
        #expect((phase1b.payload["chats"]?.arrayValue?.count ?? 0) <= 10)
        // The client: at most 10 parents have content; the rest are metadata-only, never shown as final.
        let chats = try harness.store.chatList()
        #expect(chats.count == 17)
        var withContent = 0
        for chat in chats where !chat.isSub {
            let info = try #require(try harness.store.chat(chat.chatID)).content
            if !info.isMetadataOnly { withContent += 1 }
        }
        #expect(withContent == 10)
        let metadataOnly = try #require(chats.first { $0.chatID == "chat-014" })
        let opened = try await harness.client.openChat(metadataOnly.chatID)
        #expect(opened == .loading(partial: []))
    }

    @Test func subChatsDoNotCountTowardPhase1bsCapWhenItArrivesBeforePhase1() async throws {
        var variant = OpenMatesSandboxVariant()
        variant.contentPhaseFirst = true
        variant.subChatContentInPhase1b = true
        let harness = try OpenMatesClientHarness()
        await harness.server.seed(parents: 12, messagesEach: 2, subChatsOfNewest: 3)
        await harness.server.setVariant(variant)
        await harness.client.start()
        #expect(await harness.untilSynced())
        let phases = await harness.server.sent.map(\.type).filter { $0.hasPrefix("phase_") }
        #expect(phases.first == "phase_1b_chat_content_ready")
        // 10 parents and their 3 sub-chats arrive before anything says which are sub-chats: all 13 get content.
        let phase1b = try #require(await harness.sent("phase_1b_chat_content_ready").first)
        #expect(phase1b.payload["chats"]?.arrayValue?.count == 13)
        for index in 0..<3 {
            let info = try #require(try harness.store.chat("chat-000-sub-\(index)")).content
            #expect(!info.isMetadataOnly)
        }
        var withContent = 0
        for chat in try harness.store.chatList() where !chat.isSub {
            if try #require(try harness.store.chat(chat.chatID)).content.isMetadataOnly == false { withContent += 1 }
        }
        #expect(withContent == 10)
        #expect(try harness.store.chat("chat-010")?.content.isMetadataOnly == true)
        await harness.client.close()
    }

    @Test func aFirstLoginMatchesTheServer() async throws {
        let harness = try OpenMatesClientHarness()
        await harness.server.seed(parents: 12, messagesEach: 2)
        await harness.client.start()
        #expect(await harness.untilSynced())
        let serverOrder = await harness.server.orderedChats.map(\.chatID)
        #expect(try harness.store.chatList().map(\.chatID) == serverOrder)
        let serverChat = try #require(await harness.server.chats["chat-003"])
        let stored = try #require(try harness.store.chat("chat-003"))
        #expect(stored.chat.versions.messagesV == serverChat.messagesV)
        #expect(stored.chat.encryptedTitle == serverChat.encryptedTitle)
        #expect(
            try harness.store.messages(chatID: "chat-003").map(\.messageID)
                == serverChat.messages.compactMap { $0["message_id"]?.stringValue })
        #expect(try harness.store.count(.suggestions) == 1 && harness.store.count(.dailyInspirations) == 1)
        #expect(try harness.store.count(.embeds) == 10 && harness.store.count(.embedKeys) == 10)
    }

    @Test func theSyncIndicatorStaysOnWhileTheServerReportsChatsButPhaseDataDoesNotArrive() async throws {
        let harness = try OpenMatesClientHarness()
        await harness.server.seed(parents: 5)
        var variant = OpenMatesSandboxVariant()
        variant.withheldEvents = [
            "phase_1_last_chat_ready", "phase_1b_chat_content_ready", "phase_2_last_20_chats_ready",
        ]
        await harness.server.setVariant(variant)
        await harness.client.start()
        #expect(await eventually { await harness.client.status.serverChatCount == 5 })
        #expect(await eventually { await !harness.received("sync_status_request").isEmpty })
        #expect(await eventually { await !harness.sent("phased_sync_complete").isEmpty })
        // The completion arrived, but none of the 5 chats did: still syncing, and time does not change that.
        await harness.advanceAnsweringPings(by: .seconds(3600))
        let status = await harness.client.status
        #expect(status.sync == .pending && status.syncingIndicator)
        #expect(status.connectionStatus == .connected)
    }

    /// The public server answers a phased sync on a cold cache from its database (the last chat's content only),
    /// sends `sync_status_response {is_primed: false}` after `phased_sync_complete`, and pushes `cache_primed`
    /// when its re-warm ends: an empty store plus a cold cache never looks finished, not even between the two.
    @Test func anEmptyStoreAndAColdCacheStayPendingUntilTheCacheIsPrimed() async throws {
        let harness = try OpenMatesClientHarness()
        await harness.server.seed(parents: 12, messagesEach: 2)
        var variant = OpenMatesSandboxVariant()
        variant.coldCache = true
        await harness.server.setVariant(variant)
        await harness.client.start()
        var completes = 0
        #expect(
            await harness.until { change in
                guard case .status(let status) = change else { return false }
                if status.sync == .complete { completes += 1 }
                return status.cacheIsPrimed == false
            })
        #expect(completes == 0)
        #expect(await harness.sent("phased_sync_complete").count == 1)
        await harness.advanceAnsweringPings(by: .seconds(600))
        #expect(await harness.client.status.syncingIndicator)
        // The database's answer: every chat's metadata, the last chat's content alone.
        #expect(try harness.store.chatList().count == 12)
        let withContent = try harness.store.chatList().filter {
            (try? harness.store.chat($0.chatID)?.content.isComplete(currentMessagesV: $0.versions.messagesV)) == true
        }
        #expect(withContent.map { $0.chatID } == ["chat-000"])
        await harness.server.primeCache()
        #expect(await harness.untilSynced())
        #expect(await harness.received("phased_sync_request").count == 2)
        #expect(try harness.store.chatList().count == 12)
        let filled = try harness.store.chatList().filter {
            (try? harness.store.chat($0.chatID)?.content.isComplete(currentMessagesV: $0.versions.messagesV)) == true
        }
        #expect(filled.count == 10)
    }

    /// A warm server whose `sync_status_response` comes after `phased_sync_complete` (the public server handles a
    /// connection's frames in order): the sync completes only with it.
    @Test func aSyncCompletesOnlyOnceTheServerSaidItsCacheIsPrimed() async throws {
        let harness = try OpenMatesClientHarness()
        await harness.server.seed(parents: 3)
        await harness.client.start()
        var sawComplete: OpenMatesSyncStatus?
        #expect(
            await harness.until { change in
                guard case .status(let status) = change, status.sync == .complete else { return false }
                sawComplete = status
                return true
            })
        #expect(sawComplete?.cacheIsPrimed == true)
        // The server named `cache_primed` instead of `is_primed` in other versions of its handler.
        let status = OpenMatesCacheStatus(payload: ["cache_primed": true, "chat_count": 3])
        #expect(status.isPrimed && status.chatCount == 3)
        await harness.client.close()
    }

    @Test func clearingTheLocalStoreAndRelaunchingRecoversEveryChat() async throws {
        let server = OpenMatesSandboxServer()
        await server.seed(parents: 14, messagesEach: 2, subChatsOfNewest: 1)
        let first = try OpenMatesClientHarness(server: server)
        await first.client.start()
        #expect(await first.untilSynced())
        let before = try first.store.chatList().map(\.chatID)
        await first.client.close()
        // Relaunch with a cleared store.
        let second = try OpenMatesClientHarness(server: server)
        #expect(try await second.client.coldStart().chats.isEmpty)
        await second.client.start()
        #expect(await second.untilSynced())
        #expect(try second.store.chatList().map(\.chatID) == before)
        // resetLocalStore on a running client syncs again from nothing.
        try await second.client.resetLocalStore()
        #expect(await second.untilSynced())
        #expect(try second.store.chatList().map(\.chatID) == before)
    }

    /// The flake of `clearingTheLocalStoreAndRelaunchingRecoversEveryChat`, pinned: a finished sync publishes
    /// a second complete status when `sync_status_response` lands after `phased_sync_complete`; that one was
    /// still buffered when the test reset the store, and a wait that trusted it returned before the new sync.
    /// Here the late complete is forced into the stream and the server never completes the new sync until its
    /// `cache_primed` asks for another.
    @Test func aCompleteStatusBufferedBeforeAResetDoesNotEndTheWaitForTheNewSync() async throws {
        let harness = try OpenMatesClientHarness()
        await harness.server.seed(parents: 14, messagesEach: 2, subChatsOfNewest: 1)
        await harness.client.start()
        #expect(await harness.untilSynced())
        let before = try harness.store.chatList().map(\.chatID)
        // The sync_status_response after phased_sync_complete has been applied: a second complete is queued.
        #expect(await eventually { await harness.client.status.cacheIsPrimed == true })
        var variant = OpenMatesSandboxVariant()
        variant.withheldEvents = ["phased_sync_complete"]
        await harness.server.setVariant(variant)
        try await harness.client.resetLocalStore()
        #expect(await harness.client.status.sync == .pending)
        // The server never completes the new request: nothing but the stale complete can end a wait now.
        #expect(await harness.received("phased_sync_request").count == 2)
        #expect(await harness.client.status.sync == .pending)
        await harness.server.setVariant(OpenMatesSandboxVariant())
        await harness.server.primeCache()
        #expect(await harness.untilSynced())
        #expect(try harness.store.chatList().map(\.chatID) == before)
    }

    @Test func resettingTheStoreWhileOfflineMakesTheSyncPendingAtOnce() async throws {
        var transport: RefusableOpenMatesTransport?
        let harness = try OpenMatesClientHarness(transport: { base in
            let refusable = RefusableOpenMatesTransport(base)
            transport = refusable
            return refusable
        })
        let refusable = try #require(transport)
        await harness.server.seed(parents: 4)
        await harness.client.start()
        #expect(await harness.untilSynced())
        refusable.refusing = true
        await harness.server.dropAllConnections()
        #expect(await harness.untilStatus { $0.connectionStatus == .reconnecting(attempt: 1) })
        try await harness.client.resetLocalStore()
        // Nothing is stored and no sync can run: the indicator is on, not a "complete" about the old store.
        let status = await harness.client.status
        #expect(status.sync == .pending && status.syncingIndicator)
        #expect(try harness.store.chatList().isEmpty)
        refusable.refusing = false
        #expect(await harness.clock.waitForSleepers(1))
        await harness.clock.advance(by: .seconds(1))
        #expect(await harness.untilSynced())
        #expect(try harness.store.chatList().count == 4)
    }

    @Test func coldStartShowsStoredChatsBeforeTheNetwork() async throws {
        let directory = try OpenMatesTemporaryDirectory()
        let server = OpenMatesSandboxServer()
        await server.seed(parents: 8, messagesEach: 2)
        do {
            let first = try OpenMatesClientHarness(
                server: server, store: OpenMatesStore(path: directory.path("om.sqlite")))
            await first.client.start()
            #expect(await first.untilSynced())
            await first.client.close()
            first.store.database.close()
        }
        let framesBefore = await server.received.count
        let store = try await OpenMatesStore.open(path: directory.path("om.sqlite"))
        let relaunched = try OpenMatesClientHarness(server: server, store: store)
        let start = try await relaunched.client.coldStart()
        #expect(start.chats.count == 8)
        #expect(start.messagesByChat.count == 5)
        #expect(start.messagesByChat.values.allSatisfy { $0.count == 2 })
        #expect(start.embeds.count == 5 && start.embedKeys.count == 5)
        #expect(await relaunched.server.received.count == framesBefore)
    }
}
