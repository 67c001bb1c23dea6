import Foundation
import Testing
import TidingsCore
import TidingsSandbox

@testable import TidingsOpenMates

/// Chats another device deleted while this client was offline: the server sends `chat_deleted` only to online
/// devices and phased sync lists no deletions, so the client acts on the README's other two signals — a
/// content answer that leaves a requested chat out, and a `total_chat_count` below what the store holds —
/// never on a chat merely missing from phase 2.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesOfflineDeletionTests {
    /// A synced client on `server` (14 parents: chats 10–13 stay metadata-only), its transport refusable.
    private static func synced(_ server: OpenMatesSandboxServer, store: OpenMatesStore? = nil) async throws -> (
        OpenMatesClientHarness, RefusableOpenMatesTransport
    ) {
        var refusable: RefusableOpenMatesTransport?
        let harness = try OpenMatesClientHarness(
            server: server, store: store,
            transport: { base in
                let transport = RefusableOpenMatesTransport(base)
                refusable = transport
                return transport
            })
        await harness.client.start()
        #expect(await harness.untilSynced())
        return (harness, try #require(refusable))
    }

    private static func seeded(_ variant: OpenMatesSandboxVariant = .init()) async -> OpenMatesSandboxServer {
        let server = OpenMatesSandboxServer()
        await server.seed(parents: 14, messagesEach: 3)
        await server.setVariant(variant)
        return server
    }

    /// Cuts the connection and keeps the client out; `offline` runs while no connection is open.
    private static func whileOffline(
        _ harness: OpenMatesClientHarness, _ transport: RefusableOpenMatesTransport, _ offline: () async -> Void
    ) async {
        transport.refusing = true
        await harness.server.dropAllConnections()
        #expect(await harness.untilStatus { $0.connectionStatus == .reconnecting(attempt: 1) })
        await offline()
        #expect(await harness.server.openConnectionCount == 0)
        transport.refusing = false
        #expect(await harness.clock.waitForSleepers(1))
        await harness.clock.advance(by: .seconds(1))
    }

    private static func tombstones(_ store: OpenMatesStore) throws -> Set<String> { try store.localView().tombstones }

    /// Both forms of the content answer for a deleted chat: the public server's (an empty messages list, no
    /// versions entry) and the older sandbox's (no entry at all).
    @Test(arguments: [false, true])
    func theSandboxSendsNoChatDeletedToAnOfflineClientAndItsContentAnswerLeavesTheChatOut(leftOut: Bool)
        async throws
    {
        var variant = OpenMatesSandboxVariant()
        variant.lateTotalChatCount = true
        variant.deletedChatsLeftOutOfContent = leftOut
        let server = await Self.seeded(variant)
        let (harness, transport) = try await Self.synced(server)
        await Self.whileOffline(harness, transport) { await server.deleteChat("chat-012") }
        #expect(await harness.untilSynced())
        #expect(await harness.sent("chat_deleted").isEmpty)
        // Phase 2 leaves out chats the client has up to date: chat-012's absence there deletes nothing.
        #expect(try harness.store.chat("chat-012") != nil)
        // Opening it asks for its content; the answer names neither its messages nor its versions.
        #expect(try await harness.client.openChat("chat-012") == .loading(partial: []))
        #expect(await harness.until { $0 == .chatsDeleted(["chat-012"]) })
        let answer = try #require(await harness.sent("chat_content_batch_response").last)
        #expect(answer.payload["messages_by_chat_id"] == (leftOut ? [:] : ["chat-012": []]))
        #expect(answer.payload["versions_by_chat_id"] == [:])
        #expect(answer.payload["partial_error"] == nil)
        #expect(try harness.store.chat("chat-012") == nil)
        #expect(try Self.tombstones(harness.store).contains("chat-012"))
        // The tombstone holds: a late record for it brings nothing back.
        var applier = OpenMatesSyncApplier()
        let late = applier.plan(.chatUpdate(OM.record("chat-012", messagesV: 9)), view: try harness.store.localView())
        try harness.store.apply(late.changes)
        #expect(try harness.store.chat("chat-012") == nil)
        await harness.client.close()
    }

    @Test func aTotalChatCountBelowTheStoreVerifiesTheChatsTheSyncDidNotNameAndRemovesTheDeletedOnes() async throws {
        let server = await Self.seeded()
        let (harness, transport) = try await Self.synced(server)
        let before = await server.received.count
        // A complete chat (phase 1b filled it) and a metadata-only one, deleted while this client is away.
        await Self.whileOffline(harness, transport) {
            await server.deleteChat("chat-003")
            await server.deleteChat("chat-012")
        }
        // Complete only once the store shows what the server has: no status says complete with them stored.
        #expect(await harness.untilSynced())
        #expect(try harness.store.chat("chat-003") == nil)
        #expect(try harness.store.chat("chat-012") == nil)
        #expect(try Self.tombstones(harness.store).isSuperset(of: ["chat-003", "chat-012"]))
        #expect(try harness.store.chatList().map(\.chatID) == (await server.orderedChats.map(\.chatID)))
        // Verified in batches of at most 10, naming only chats this sync did not name, each once.
        let requests = await server.received.dropFirst(before).filter { $0.type == "request_chat_content_batch" }
        #expect(!requests.isEmpty)
        let named = requests.flatMap { ($0.payload["chat_ids"]?.arrayValue ?? []).compactMap(\.stringValue) }
        #expect(requests.allSatisfy { ($0.payload["chat_ids"]?.arrayValue?.count ?? 0) <= 10 })
        #expect(named.contains("chat-003") && named.contains("chat-012"))
        #expect(Set(named).count == named.count)
        #expect(await harness.sent("chat_deleted").isEmpty)
        await harness.client.close()
    }

    @Test func aLateTotalChatCountIsNotTheOnlySignalTheNextSyncRemovesTheChat() async throws {
        var variant = OpenMatesSandboxVariant()
        variant.lateTotalChatCount = true
        let server = await Self.seeded(variant)
        let (harness, transport) = try await Self.synced(server)
        await Self.whileOffline(harness, transport) { await server.deleteChat("chat-004") }
        #expect(await harness.untilSynced())
        // The count is a sync late and the answer signal needs a request: nothing says chat-004 is gone yet, and
        // a chat is never deleted without a signal.
        #expect(try harness.store.chat("chat-004") != nil)
        await server.dropAllConnections()
        #expect(await harness.untilStatus { $0.connectionStatus == .reconnecting(attempt: 1) })
        #expect(await harness.advanceToNextDeadline())
        #expect(await harness.untilSynced())
        #expect(try harness.store.chat("chat-004") == nil)
        #expect(try harness.store.chatList().map(\.chatID) == (await server.orderedChats.map(\.chatID)))
        await harness.client.close()
    }

    @Test func aSecondContentRequestWaitsForTheFirstAnswerOrItsTimeout() async throws {
        var variant = OpenMatesSandboxVariant()
        variant.contentNeverAnswered = ["chat-010"]
        let server = await Self.seeded(variant)
        let (harness, _) = try await Self.synced(server)
        _ = try await harness.client.openChat("chat-010")
        #expect(await eventually { await harness.received("request_chat_content_batch").count == 1 })
        _ = try await harness.client.openChat("chat-011")
        // The first is unanswered: the second waits (the wire has no request ID to tell their answers apart).
        for _ in 0..<1_000 { await Task.yield() }
        #expect(await harness.received("request_chat_content_batch").count == 1)
        #expect(await harness.clock.waitForSleepers(2))
        await harness.clock.advance(by: .seconds(30))
        #expect(await harness.until { $0 == .hydrated(["chat-011"]) })
        let requests = await harness.received("request_chat_content_batch")
        #expect(requests.map { $0.payload["chat_ids"] } == [["chat-010"], ["chat-011"]])
        await harness.client.close()
    }

    @Test func afterAnUnansweredRequestNoAnswerOnThatConnectionDeletesAnything() async throws {
        var variant = OpenMatesSandboxVariant()
        variant.lateTotalChatCount = true
        let server = await Self.seeded(variant)
        let (harness, transport) = try await Self.synced(server)
        await Self.whileOffline(harness, transport) { await server.deleteChat("chat-012") }
        #expect(await harness.untilSynced())
        variant.contentNeverAnswered = ["chat-010"]
        await server.setVariant(variant)
        _ = try await harness.client.openChat("chat-010")
        #expect(await eventually { await harness.received("request_chat_content_batch").count == 1 })
        #expect(await harness.clock.waitForSleepers(2))
        await harness.clock.advance(by: .seconds(30))
        #expect(await harness.until { if case .failure = $0 { true } else { false } })
        // A late answer to the first request could now be taken for the next one's: chat-012 left out of an
        // answer on this connection is not deleted, only reported unavailable.
        _ = try await harness.client.openChat("chat-012")
        #expect(
            await harness.until { change in
                if case .failure(let error) = change { return error.chatIDs == ["chat-012"] }
                return false
            })
        #expect(try harness.store.chat("chat-012") != nil)
        // The next connection matches answers again (and the count has caught up: this sync verifies).
        await server.dropAllConnections()
        #expect(await harness.untilStatus { $0.connectionStatus == .reconnecting(attempt: 1) })
        #expect(await harness.clock.waitForSleepers(1))
        await harness.clock.advance(by: .seconds(1))
        #expect(await harness.until { $0 == .chatsDeleted(["chat-012"]) })
        #expect(await harness.untilSynced())
        #expect(try harness.store.chat("chat-012") == nil)
        await harness.client.close()
    }

    @Test func pendingActionsOnAChatDeletedWhileOfflineFailExplicitlyAndTheDeletionWins() async throws {
        let server = await Self.seeded()
        let (harness, transport) = try await Self.synced(server)
        let failures = LockedState<[OpenMatesPendingAction]>([])
        await Self.whileOffline(harness, transport) {
            _ = try? await harness.client.setPinned(true, chatID: "chat-005")
            _ = try? await harness.client.sendMessage(
                chatID: "chat-005", messageID: "local-1", encryptedContent: "sealed", createdAt: 1_700_000_500)
            _ = try? await harness.client.setPinned(true, chatID: "chat-001")
            await server.deleteChat("chat-005")
        }
        #expect(
            await harness.until { change in
                if case .actionFailed(let action, let error) = change, error == .actionFailed {
                    failures.withLock { $0.append(action) }
                }
                return failures.withLock { $0.count } == 1
            })
        #expect(await harness.untilSynced())
        // The pin went out before the deletion was known; the reference server accepts a pin of any chat.
        #expect(failures.withLock { $0.map(\.kind) } == [.storeMessage])
        #expect(try harness.store.chat("chat-005") == nil)
        #expect(await eventually { (try? harness.store.pendingActions().isEmpty) == true })
        #expect(await server.appliedActions == ["update_chat:chat-001:true"])
        await harness.client.close()
    }

    @Test func anUnansweredVerificationKeepsSyncPendingUntilItsTimeoutThenReportsTheChatsUnverified() async throws {
        var variant = OpenMatesSandboxVariant()
        variant.contentNeverAnswered = ["chat-003"]
        let server = await Self.seeded(variant)
        let (harness, transport) = try await Self.synced(server)
        await Self.whileOffline(harness, transport) { await server.deleteChat("chat-003") }
        #expect(await eventually { await harness.received("request_chat_content_batch").count == 1 })
        #expect(await eventually { await harness.client.traffic.received["sync_status_response", default: 0] == 2 })
        // Phased sync complete, verification unanswered: not complete.
        #expect(await harness.client.status.sync == .pending)
        #expect(await harness.clock.waitForSleepers(2))
        await harness.clock.advance(by: .seconds(30))
        // Not pending forever: the verification ends, the chat is kept (nothing showed it deleted), and the UI
        // learns it was not verified; the next sync tries again.
        #expect(await harness.untilSynced())
        #expect(await harness.client.status.lastError?.contains("1 chats not verified") == true)
        #expect(try harness.store.chat("chat-003") != nil)
        await harness.client.close()
    }

    @Test func aVerificationThatEndsUnansweredLeavesTheStatusMayBeStaleUntilASyncVerifies() async throws {
        var variant = OpenMatesSandboxVariant()
        variant.contentNeverAnswered = ["chat-003"]
        let server = await Self.seeded(variant)
        let (harness, transport) = try await Self.synced(server)
        #expect(await harness.client.status.unverifiedChatCount == 0)
        await Self.whileOffline(harness, transport) { await server.deleteChat("chat-003") }
        #expect(await eventually { await harness.received("request_chat_content_batch").count == 1 })
        #expect(await harness.clock.waitForSleepers(2))
        await harness.clock.advance(by: .seconds(30))
        // Complete by the phased sync, but the store may still show the chat the server deleted: the status
        // says so, for a UI's "may be stale".
        #expect(await harness.untilSynced())
        var status = await harness.client.status
        #expect(status.unverifiedChatCount == 1 && status.mayBeStale)
        #expect(try harness.store.chat("chat-003") != nil)
        await server.setVariant(OpenMatesSandboxVariant())
        // The next connection verifies: the chat is found deleted and the status is no longer stale.
        await server.dropAllConnections()
        #expect(await harness.untilStatus { $0.connectionStatus == .reconnecting(attempt: 1) })
        #expect(await harness.clock.waitForSleepers(1))
        await harness.clock.advance(by: .seconds(1))
        #expect(await harness.until { $0 == .chatsDeleted(["chat-003"]) })
        #expect(await harness.untilSynced())
        status = await harness.client.status
        #expect(status.unverifiedChatCount == 0 && !status.mayBeStale)
        #expect(try harness.store.chat("chat-003") == nil)
        await harness.client.close()
    }

    @Test func aChatDeletedWhileOnlineLeavesTheSyncComplete() async throws {
        let server = await Self.seeded()
        let (harness, _) = try await Self.synced(server)
        await server.deleteChat("chat-003")
        #expect(await harness.until { $0 == .chatsDeleted(["chat-003"]) })
        // The server's count was taken before the deletion: it now counts one chat less, as the store does, and
        // the sync stays complete (it went pending until the next sync before).
        #expect(await harness.untilStatus { $0.serverChatCount == 13 })
        #expect(await harness.client.status.sync == .complete)
        #expect(try harness.store.chatList().count == 13)
        await harness.client.close()
    }
}
