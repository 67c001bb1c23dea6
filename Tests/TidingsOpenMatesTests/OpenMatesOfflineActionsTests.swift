import Foundation
import Testing
import TidingsCore
import TidingsSandbox

@testable import TidingsOpenMates

/// Offline actions in the reference server's own events (commit 1f6bb71): queued durably with their local
/// effect, replayed in order on reconnect, each settled by what that server answers the acting device — never
/// dropped, never applied twice, and no user message asked of the AI twice once it was acknowledged.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesOfflineActionsTests {
    /// A fixed hide secret (an app derives it from the hide password; PBKDF2 is not what is tested here).
    static let unlock = OpenMatesHiddenChatUnlock(
        secret: (try? TidingsCrypto.SymmetricKey(bytes: TidingsCrypto.SHA256.hash(Array("test hide".utf8))))
            ?? .random())

    /// A synced harness whose transport can be made to refuse connections (offline).
    static func online(parents: Int = 3, store: OpenMatesStore? = nil, variant: OpenMatesSandboxVariant = .init())
        async throws -> (OpenMatesClientHarness, RefusableOpenMatesTransport)
    {
        var refusable: RefusableOpenMatesTransport?
        let server = OpenMatesSandboxServer()
        await server.seed(parents: parents)
        await server.setVariant(variant)
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

    static func goOffline(_ harness: OpenMatesClientHarness, _ transport: RefusableOpenMatesTransport) async {
        transport.refusing = true
        await harness.server.dropAllConnections()
        #expect(await harness.untilStatus { $0.connectionStatus == .reconnecting(attempt: 1) })
    }

    static func reconnect(_ harness: OpenMatesClientHarness, _ transport: RefusableOpenMatesTransport) async {
        transport.refusing = false
        #expect(await harness.clock.waitForSleepers(1))
        await harness.clock.advance(by: .seconds(1))
    }

    static let actionEvents: Set<String> = [
        "delete_message", "update_chat", "encrypted_chat_metadata", "chat_message_added",
    ]

    static func actionTypes(_ server: OpenMatesSandboxServer) async -> [String] {
        await server.received.map(\.type).filter { actionEvents.contains($0) }
    }

    static func outcomes(_ harness: OpenMatesClientHarness, count: Int) async -> (
        succeeded: [OpenMatesPendingAction], failed: [(OpenMatesPendingAction, OpenMatesError)]
    ) {
        var succeeded: [OpenMatesPendingAction] = []
        var failed: [(OpenMatesPendingAction, OpenMatesError)] = []
        _ = await harness.until { change in
            if case .actionSucceeded(let action) = change { succeeded.append(action) }
            if case .actionFailed(let action, let error) = change { failed.append((action, error)) }
            return succeeded.count + failed.count == count
        }
        return (succeeded, failed)
    }

    @Test func actionsTakenOfflineReplayInTheReferenceServersEventsAndSettleByItsAnswers() async throws {
        let (harness, transport) = try await Self.online()
        let server = harness.server
        await Self.goOffline(harness, transport)
        try await harness.client.setPinned(true, chatID: "chat-002")
        try await harness.client.sendMessage(
            chatID: "chat-000", messageID: "local-1", encryptedContent: "sealed-local", createdAt: 1_700_000_100,
            askAI: "hello")
        try await harness.client.deleteMessage(chatID: "chat-001", messageID: "chat-001-m0")
        try await harness.client.setHidden(true, chatID: "chat-001", masterKey: server.masterKey, unlock: Self.unlock)
        // Local at once, before any server answer.
        #expect(try harness.store.chat("chat-002")?.chat.pinned == true)
        #expect(try harness.store.chat("chat-001")?.chat.hidden == true)
        #expect(try harness.store.messages(chatID: "chat-000").map(\.messageID).contains("local-1"))

        await Self.reconnect(harness, transport)
        let (succeeded, failed) = await Self.outcomes(harness, count: 5)
        #expect(failed.isEmpty)
        #expect(succeeded.map(\.kind) == [.pin, .storeMessage, .askAI, .deleteMessage, .hide])
        #expect(
            await Self.actionTypes(server) == [
                "update_chat", "encrypted_chat_metadata", "chat_message_added", "delete_message",
                "encrypted_chat_metadata",
            ])
        // The pin succeeded with no answer to this device: the reference server sends it nothing.
        #expect(await harness.sent("chat_pinned_updated").isEmpty)
        #expect(
            await server.appliedActions == [
                "update_chat:chat-002:true", "store_message:chat-000:local-1", "delete_message:chat-001:chat-001-m0",
                "hide:chat-001",
            ])
        #expect(await server.aiRequests == ["chat-000:local-1"])
        // No invented field or event reaches the server.
        #expect(await server.ignoredTypes.isEmpty)
        #expect(await server.received.allSatisfy { $0.payload["client_action_id"] == nil })
        // The hidden chat's key is re-wrapped under the hide secret, on the server and here.
        let wrapped = try #require(await server.chats["chat-001"]?.encryptedChatKey)
        #expect(try harness.store.chat("chat-001")?.chat.encryptedChatKey == wrapped)
        #expect((try? OpenMatesChatKeyWrap.unwrap(wrapped, masterKey: server.masterKey)) == nil)
        #expect(try Self.unlock.unwrap(wrapped).bytes == (await server.chatKeys["chat-001"])?.bytes)
        #expect(try harness.store.pendingActions().isEmpty)

        // Unhiding wraps it under the master key again.
        try await harness.client.setHidden(false, chatID: "chat-001", masterKey: server.masterKey, unlock: Self.unlock)
        #expect(await Self.outcomes(harness, count: 1).succeeded.map(\.kind) == [.hide])
        let unhidden = try #require(await server.chats["chat-001"]?.encryptedChatKey)
        #expect(try OpenMatesChatKeyWrap.unwrap(unhidden, masterKey: server.masterKey).bytes.count == 32)
        #expect(await server.chats["chat-001"]?.hidden == false)
        await harness.client.close()
    }

    @Test func theSandboxRefusesAKeyChangeWithoutTheRotationFlag() async throws {
        let server = OpenMatesSandboxServer()
        await server.seed(parents: 1)
        let channel = await server.openChannel()
        let key = try Self.unlock.wrap(try #require(await server.chatKeys["chat-000"]))
        var frames = channel.inbound.makeAsyncIterator()
        try await channel.send(
            OpenMatesEnvelope(
                type: "encrypted_chat_metadata", payload: ["chat_id": "chat-000", "encrypted_chat_key": .string(key)]
            ).text)
        let refused = try OpenMatesEnvelope(text: try #require(try await frames.next()))
        #expect(refused.type == "chat_key_mismatch")
        #expect(refused.payload["chat_id"] == "chat-000")
        #expect(await server.chats["chat-000"]?.hidden == false)
        try await channel.send(
            OpenMatesEnvelope(
                type: "encrypted_chat_metadata",
                payload: [
                    "chat_id": "chat-000", "encrypted_chat_key": .string(key), "allow_chat_key_rotation": true,
                    "chat_key_rotation_reason": "hidden_chat",
                ]
            ).text)
        let stored = try OpenMatesEnvelope(text: try #require(try await frames.next()))
        #expect(stored.type == "encrypted_metadata_stored")
        #expect(await server.chats["chat-000"]?.hidden == true)
        #expect(await server.appliedActions == ["hide:chat-000"])
        // The invented events of earlier versions get no answer at all, as on the reference server.
        try await channel.send(OpenMatesEnvelope(type: "pin_chat", payload: ["chat_id": "chat-000"]).text)
        #expect(await server.ignoredTypes == ["pin_chat"])
        await channel.close()
    }

    @Test func anAIRequestIsSentOnceAcrossAReconnectAfterItsConfirmation() async throws {
        let (harness, transport) = try await Self.online()
        try await harness.client.sendMessage(
            chatID: "chat-000", messageID: "local-1", encryptedContent: "sealed-local", createdAt: 1_700_000_100,
            askAI: "hello")
        #expect(await Self.outcomes(harness, count: 2).succeeded.map(\.kind) == [.storeMessage, .askAI])
        await Self.goOffline(harness, transport)
        await Self.reconnect(harness, transport)
        #expect(await harness.untilSynced())
        #expect(await harness.received("chat_message_added").count == 1)
        #expect(await harness.server.aiRequests == ["chat-000:local-1"])
        await harness.client.close()
    }

    @Test func anAIRequestWithoutAnyAcknowledgementIsResentAfterAReconnect() async throws {
        var variant = OpenMatesSandboxVariant()
        variant.unansweredActions = ["chat_message_added"]
        let (harness, transport) = try await Self.online(variant: variant)
        try await harness.client.sendMessage(
            chatID: "chat-000", messageID: "local-1", encryptedContent: "sealed-local", createdAt: 1_700_000_100,
            askAI: "hello")
        #expect(await Self.outcomes(harness, count: 1).succeeded.map(\.kind) == [.storeMessage])
        #expect(await eventually { await harness.received("chat_message_added").count == 1 })
        await harness.server.setVariant(OpenMatesSandboxVariant())
        await Self.goOffline(harness, transport)
        await Self.reconnect(harness, transport)
        #expect(await Self.outcomes(harness, count: 1).succeeded.map(\.kind) == [.askAI])
        #expect(await harness.received("chat_message_added").count == 2)
        #expect(try harness.store.pendingActions().isEmpty)
        await harness.client.close()
    }

    @Test func requestChatHistoryIsAnsweredByOneResendWithTheDecryptedHistory() async throws {
        var variant = OpenMatesSandboxVariant()
        variant.aiCacheLacksHistory = true
        let (harness, _) = try await Self.online(variant: variant)
        await harness.client.setContentDecryptor(OpenMatesContentDecryptor(masterKey: harness.server.masterKey))
        try await harness.client.sendMessage(
            chatID: "chat-000", messageID: "local-1", encryptedContent: "sealed-local", createdAt: 1_700_000_100,
            askAI: "hello")
        #expect(await Self.outcomes(harness, count: 2).succeeded.map(\.kind) == [.storeMessage, .askAI])
        let sent = await harness.received("chat_message_added")
        #expect(sent.count == 2)
        #expect(sent.first?.payload["message_history"] == nil)
        let history = sent.last?.payload["message_history"]?.arrayValue ?? []
        #expect(history.compactMap { $0.objectValue?["content"]?.stringValue }.first == "Message 0 of chat-000")
        #expect(await harness.server.aiRequests == ["chat-000:local-1"])
        await harness.client.close()
    }

    @Test func aQueueOfAnOlderVersionIsMappedWhenReadAndNothingInItIsLost() async throws {
        let directory = try OpenMatesTemporaryDirectory()
        let store = try OpenMatesStore(path: directory.path("om.sqlite"))
        let (harness, _) = try await Self.online(store: store)
        await harness.client.close()
        let message: JSONValue = [
            "message_id": "old-1", "role": "user", "created_at": 1_700_000_100, "encrypted_content": "sealed-old",
        ]
        let legacy = [
            OpenMatesPendingAction(
                kind: .init(rawValue: "send_message"), chatID: "chat-000",
                payload: ["message": message, "message_id": "old-1"]),
            OpenMatesPendingAction(
                kind: .init(rawValue: "pin_chat"), chatID: "chat-001",
                payload: ["pinned": true, OpenMatesPendingAction.valueBeforeKey: false]),
            OpenMatesPendingAction(
                kind: .init(rawValue: "hide_chat"), chatID: "chat-002", payload: ["is_hidden": true]),
            OpenMatesPendingAction(
                kind: .init(rawValue: "archive_chat"), chatID: "chat-002",
                payload: ["is_archived": true, OpenMatesPendingAction.valueBeforeKey: false]),
        ]
        try store.enqueue(legacy)
        var archived = try #require(try store.chat("chat-002")?.chat)
        archived.archived = true
        try store.apply([.upsertChat(archived)])
        let read = try store.pendingActions()
        #expect(read.map(\.kind.rawValue) == ["store_message", "pin", "hide", "archive_chat"])
        #expect(read.first?.payload["encrypted_content"] == "sealed-old")

        let relaunched = try OpenMatesClientHarness(server: harness.server, store: store)
        await relaunched.client.start()
        let (succeeded, failed) = await Self.outcomes(relaunched, count: 4)
        #expect(succeeded.map(\.kind) == [.storeMessage, .pin])
        #expect(failed.map(\.0.kind.rawValue) == ["hide", "archive_chat"])
        #expect(failed.allSatisfy { $0.1 == .actionFailed })
        #expect(
            await relaunched.server.appliedActions == ["store_message:chat-000:old-1", "update_chat:chat-001:true"])
        #expect(try store.chat("chat-002")?.chat.archived == false)
        #expect(try await relaunched.client.failedActions().count == 2)
        #expect(try store.pendingActions().isEmpty)
        await relaunched.client.close()
    }

    @Test func aPendingHideKeepsItsKeyOverTheServerAndADeletedChatTakesNoAction() async throws {
        let (harness, transport) = try await Self.online()
        await Self.goOffline(harness, transport)
        try await harness.client.setHidden(
            true, chatID: "chat-001", masterKey: harness.server.masterKey, unlock: Self.unlock)
        let local = try harness.store.chat("chat-001")?.chat.encryptedChatKey
        await harness.server.postMessageFromOtherDevice(chatID: "chat-001")
        var variant = OpenMatesSandboxVariant()
        variant.unansweredActions = ["encrypted_chat_metadata"]
        await harness.server.setVariant(variant)
        await Self.reconnect(harness, transport)
        #expect(await harness.untilSynced())
        #expect(try harness.store.chat("chat-001")?.chat.hidden == true)
        #expect(try harness.store.chat("chat-001")?.chat.encryptedChatKey == local)
        #expect(try harness.store.pendingActions().map(\.kind) == [.hide])

        await harness.server.deleteChat("chat-002")
        #expect(await eventually { (try? harness.store.chat("chat-002")) == nil })
        await #expect(throws: OpenMatesError.actionFailed) {
            try await harness.client.setPinned(true, chatID: "chat-002")
        }
        await harness.client.close()
    }

    /// A hide's acknowledgement removes it from the queue and writes the key the server now holds: both or
    /// neither. Before, they were two transactions; a process killed between them (here: every write failing
    /// from the second on) left the hide gone from the queue and announced by nobody, before or after a
    /// relaunch. A path that fits `OpenMatesModelTests` seed 453's "action 1:2 announced 0 times" in one full
    /// run (a kill and hides in its schedule; it passed three times alone).
    @Test func aHideLeavesTheQueueOnlyWithTheKeyItsAcknowledgementWrites() async throws {
        let (harness, _) = try await Self.online()
        var variant = OpenMatesSandboxVariant()
        variant.unansweredActions = ["encrypted_chat_metadata"]
        await harness.server.setVariant(variant)
        let hide = try await harness.client.setHidden(
            true, chatID: "chat-001", masterKey: harness.server.masterKey, unlock: Self.unlock)
        #expect(await eventually { await harness.received("encrypted_chat_metadata").count == 1 })
        // The acknowledgement's first row write succeeds, the next fails, as if the process died there (the
        // hook's own row is the first of the two it counts).
        try OpenMatesModelTests.armKill(harness.store, afterRowWrites: 2)
        let answers = await harness.client.traffic.received["encrypted_metadata_stored", default: 0]
        #expect(await harness.server.push("encrypted_metadata_stored", ["chat_id": "chat-001", "status": "ok"]) == 1)
        #expect(
            await eventually {
                await harness.client.traffic.received["encrypted_metadata_stored", default: 0] > answers
            })
        // Settled in memory before this read: nothing else is in flight on the client's executor.
        await harness.client.close()
        var announced = false
        _ = await harness.until { change in
            if case .actionSucceeded(let action) = change, action.id == hide.id { announced = true }
            return announced
        }
        let stillQueued = try harness.store.pendingActions().map(\.id)
        #expect(announced || stillQueued.contains(hide.id), "the hide left the queue unannounced")
    }
}
