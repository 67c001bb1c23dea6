import Foundation
import Testing
import TidingsCore
import TidingsSandbox

@testable import TidingsOpenMates

/// Offline actions: queued durably with their local effect, replayed in order on reconnect, each confirmed
/// by the server's echo or failed explicitly after 3 tries — never dropped, never applied twice.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesOfflineActionsTests {
    /// A synced harness whose transport can be made to refuse connections (offline).
    private static func online(parents: Int = 3, store: OpenMatesStore? = nil) async throws -> (
        OpenMatesClientHarness, RefusableOpenMatesTransport
    ) {
        var refusable: RefusableOpenMatesTransport?
        let server = OpenMatesSandboxServer()
        await server.seed(parents: parents)
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

    private static func goOffline(_ harness: OpenMatesClientHarness, _ transport: RefusableOpenMatesTransport) async {
        transport.refusing = true
        await harness.server.dropAllConnections()
        #expect(await harness.untilStatus { $0.connectionStatus == .reconnecting(attempt: 1) })
    }

    private static func reconnect(_ harness: OpenMatesClientHarness, _ transport: RefusableOpenMatesTransport) async {
        transport.refusing = false
        #expect(await harness.clock.waitForSleepers(1))
        await harness.clock.advance(by: .seconds(1))
    }

    private static func actionTypes(_ server: OpenMatesSandboxServer) async -> [String] {
        let kinds: Set<String> = ["send_message", "delete_message", "pin_chat", "archive_chat", "hide_chat"]
        return await server.received.map(\.type).filter { kinds.contains($0) }
    }

    @Test func actionsTakenOfflineApplyLocallyAndReplayInOrderOnReconnect() async throws {
        let (harness, transport) = try await Self.online()
        await Self.goOffline(harness, transport)
        try await harness.client.setPinned(true, chatID: "chat-002")
        try await harness.client.sendMessage(
            chatID: "chat-000", messageID: "local-1", encryptedContent: "sealed-local", createdAt: 1_700_000_100)
        try await harness.client.deleteMessage(chatID: "chat-001", messageID: "chat-001-m0")
        try await harness.client.setArchived(true, chatID: "chat-001")
        try await harness.client.setHidden(true, chatID: "chat-002")
        // Local at once, before any server answer.
        #expect(try harness.store.chat("chat-002")?.chat.pinned == true)
        #expect(try harness.store.chat("chat-002")?.chat.hidden == true)
        #expect(try harness.store.chat("chat-001")?.chat.archived == true)
        #expect(try harness.store.messages(chatID: "chat-000").map(\.messageID).contains("local-1"))
        #expect(try !harness.store.messages(chatID: "chat-001").map(\.messageID).contains("chat-001-m0"))
        #expect(try harness.store.pendingActions().count == 5)
        #expect(await Self.actionTypes(harness.server).isEmpty)

        await Self.reconnect(harness, transport)
        var succeeded: [OpenMatesPendingAction.Kind] = []
        #expect(
            await harness.until { change in
                if case .actionSucceeded(let action) = change { succeeded.append(action.kind) }
                return succeeded.count == 5
            })
        #expect(succeeded == [.pinChat, .sendMessage, .deleteMessage, .archiveChat, .hideChat])
        #expect(
            await Self.actionTypes(harness.server) == [
                "pin_chat", "send_message", "delete_message", "archive_chat", "hide_chat",
            ])
        #expect(
            await harness.server.appliedActions == [
                "pin_chat:chat-002", "send_message:chat-000:local-1", "delete_message:chat-001:chat-001-m0",
                "archive_chat:chat-001", "hide_chat:chat-002",
            ])
        #expect(try harness.store.pendingActions().isEmpty)
        let server = await harness.server.chats
        #expect(server["chat-002"]?.pinned == true && server["chat-002"]?.hidden == true)
        #expect(server["chat-001"]?.archived == true)
        // The acknowledged values stay: the server now says the same.
        #expect(try harness.store.chat("chat-002")?.chat.hidden == true)
        #expect(try harness.store.messages(chatID: "chat-000").filter { $0.messageID == "local-1" }.count == 1)
        await harness.client.close()
    }

    @Test func aDisconnectAfterSendBeforeTheAnswerReplaysWithoutApplyingTwice() async throws {
        let (harness, transport) = try await Self.online()
        var variant = OpenMatesSandboxVariant()
        variant.unansweredActions = ["send_message"]
        await harness.server.setVariant(variant)
        try await harness.client.sendMessage(
            chatID: "chat-000", messageID: "local-1", encryptedContent: "sealed", createdAt: 1_700_000_100)
        // The server applied it, but its answer never reached this device.
        #expect(await eventually { await harness.server.appliedActions.count == 1 })
        #expect(try harness.store.pendingActions().count == 1)
        await harness.server.setVariant(OpenMatesSandboxVariant())
        await Self.goOffline(harness, transport)
        #expect(try harness.store.pendingActions().first?.tries == 1)
        await Self.reconnect(harness, transport)
        #expect(
            await harness.until { change in
                if case .actionSucceeded(let action) = change { return action.messageID == "local-1" }
                return false
            })
        #expect(await Self.actionTypes(harness.server) == ["send_message", "send_message"])
        #expect(await harness.server.appliedActions == ["send_message:chat-000:local-1"])
        let serverMessages = await harness.server.chats["chat-000"]?.messages ?? []
        #expect(serverMessages.filter { $0["message_id"]?.stringValue == "local-1" }.count == 1)
        #expect(try harness.store.pendingActions().isEmpty)
        #expect(try harness.store.messages(chatID: "chat-000").filter { $0.messageID == "local-1" }.count == 1)
        await harness.client.close()
    }

    @Test func aRelaunchWithAQueueReplaysIt() async throws {
        let directory = try OpenMatesTemporaryDirectory()
        let path = directory.path("om.sqlite")
        let (first, transport) = try await Self.online(store: OpenMatesStore(path: path))
        await Self.goOffline(first, transport)
        try await first.client.setPinned(true, chatID: "chat-001")
        try await first.client.sendMessage(
            chatID: "chat-001", messageID: "local-1", encryptedContent: "sealed", createdAt: 1_700_000_100)
        await first.client.close()
        first.store.database.close()
        #expect(await Self.actionTypes(first.server).isEmpty)

        let relaunched = try OpenMatesClientHarness(server: first.server, store: OpenMatesStore(path: path))
        #expect(try relaunched.store.pendingActions().map(\.kind) == [.pinChat, .sendMessage])
        #expect(try relaunched.store.chat("chat-001")?.chat.pinned == true)
        await relaunched.client.start()
        var succeeded = 0
        #expect(
            await relaunched.until { change in
                if case .actionSucceeded = change { succeeded += 1 }
                return succeeded == 2
            })
        #expect(await relaunched.server.appliedActions == ["pin_chat:chat-001", "send_message:chat-001:local-1"])
        #expect(try relaunched.store.pendingActions().isEmpty)
        await relaunched.client.close()
        relaunched.store.database.close()
    }

    @Test func aRefusingServerFailsTheActionExplicitlyAfterThreeTriesAndUndoesIt() async throws {
        let (harness, _) = try await Self.online()
        var variant = OpenMatesSandboxVariant()
        variant.refusedActions = ["pin_chat", "send_message"]
        await harness.server.setVariant(variant)
        try await harness.client.setPinned(true, chatID: "chat-001")
        try await harness.client.sendMessage(
            chatID: "chat-001", messageID: "local-1", encryptedContent: "sealed", createdAt: 1_700_000_100)
        try await harness.client.setHidden(true, chatID: "chat-002")
        var failures: [(OpenMatesPendingAction, OpenMatesError)] = []
        var succeeded: [OpenMatesPendingAction.Kind] = []
        #expect(
            await harness.until { change in
                if case .actionFailed(let action, let error) = change { failures.append((action, error)) }
                if case .actionSucceeded(let action) = change { succeeded.append(action.kind) }
                return failures.count == 2 && succeeded.count == 1
            })
        #expect(failures.map(\.0.kind) == [.pinChat, .sendMessage])
        #expect(failures.allSatisfy { $0.1 == .actionFailed && $0.0.tries == 3 })
        #expect(failures.first?.1.detail?.contains("pin_chat refused") == true)
        #expect(failures.first?.1.chatIDs == ["chat-001"])
        #expect(succeeded == [.hideChat])
        #expect(
            await Self.actionTypes(harness.server) == [
                "pin_chat", "pin_chat", "pin_chat", "send_message", "send_message", "send_message", "hide_chat",
            ])
        // Undone locally: the UI shows the server's state again, and nothing is left queued.
        #expect(try harness.store.chat("chat-001")?.chat.pinned == false)
        #expect(try !harness.store.messages(chatID: "chat-001").map(\.messageID).contains("local-1"))
        #expect(try harness.store.pendingActions().isEmpty)
        #expect(await harness.server.appliedActions == ["hide_chat:chat-002"])
        await harness.client.close()
    }

    /// Waits until `count` actions failed for good.
    private static func failures(_ harness: OpenMatesClientHarness, count: Int) async -> [OpenMatesPendingAction] {
        var failed: [OpenMatesPendingAction] = []
        _ = await harness.until { change in
            if case .actionFailed(let action, _) = change { failed.append(action) }
            return failed.count == count
        }
        return failed
    }

    @Test func aFailedPinOnAChatTheServerHasPinnedLeavesItPinned() async throws {
        let server = OpenMatesSandboxServer()
        await server.seed(parents: 3)
        var pinned = try #require(await server.chats["chat-001"])
        pinned.pinned = true
        await server.put(pinned)
        let harness = try OpenMatesClientHarness(server: server)
        await harness.client.start()
        #expect(await harness.untilSynced())
        #expect(try harness.store.chat("chat-001")?.chat.pinned == true)
        var variant = OpenMatesSandboxVariant()
        variant.refusedActions = ["pin_chat", "hide_chat"]
        await server.setVariant(variant)
        try await harness.client.setPinned(true, chatID: "chat-001")
        try await harness.client.setHidden(false, chatID: "chat-002")
        #expect(await Self.failures(harness, count: 2).map(\.kind) == [.pinChat, .hideChat])
        // Undoing restores what the server said, not the opposite of what was asked.
        #expect(try harness.store.chat("chat-001")?.chat.pinned == true)
        #expect(try harness.store.chat("chat-002")?.chat.hidden == false)
        await harness.client.close()
    }

    @Test func twoFailedActionsOnOneFlagRestoreTheServersValue() async throws {
        let (harness, transport) = try await Self.online()
        var variant = OpenMatesSandboxVariant()
        variant.refusedActions = ["archive_chat"]
        await harness.server.setVariant(variant)
        await Self.goOffline(harness, transport)
        try await harness.client.setArchived(true, chatID: "chat-000")
        try await harness.client.setArchived(false, chatID: "chat-000")
        #expect(try harness.store.chat("chat-000")?.chat.archived == false)
        await Self.reconnect(harness, transport)
        #expect(await Self.failures(harness, count: 2).map(\.kind) == [.archiveChat, .archiveChat])
        // Neither was applied: the chat shows the server's value (not the opposite of the last one asked for).
        #expect(try harness.store.chat("chat-000")?.chat.archived == false)
        #expect(try harness.store.pendingActions().isEmpty)
        #expect(await harness.server.chats["chat-000"]?.archived == false)
        await harness.client.close()
    }

    @Test func anUnansweredActionCountsATryOnTheClockAndFailsAfterThree() async throws {
        let (harness, _) = try await Self.online()
        var variant = OpenMatesSandboxVariant()
        variant.unansweredActions = ["archive_chat"]
        await harness.server.setVariant(variant)
        try await harness.client.setArchived(true, chatID: "chat-000")
        for tries in 1...3 {
            #expect(await eventually { await Self.actionTypes(harness.server).count == tries })
            #expect(try harness.store.pendingActions().first?.tries == tries - 1)
            // The ping task sleeps too; the action's deadline (10 s) comes first.
            #expect(await harness.clock.waitForSleepers(2))
            await harness.clock.advance(by: .seconds(10))
        }
        #expect(
            await harness.until { change in
                if case .actionFailed(_, let error) = change { return error.detail?.contains("did not answer") == true }
                return false
            })
        #expect(try harness.store.pendingActions().isEmpty)
        // The server did apply it (idempotently, once); the client's value went back until the server says so.
        #expect(await harness.server.appliedActions == ["archive_chat:chat-000"])
        await harness.client.close()
    }

    @Test func aPendingHideWinsOverTheServerAndADeletedChatTakesNoAction() async throws {
        let (harness, transport) = try await Self.online()
        await Self.goOffline(harness, transport)
        try await harness.client.setHidden(true, chatID: "chat-001")
        // The server still says visible, and phased sync sends it with a newer version.
        await harness.server.postMessageFromOtherDevice(chatID: "chat-001")
        var variant = OpenMatesSandboxVariant()
        variant.unansweredActions = ["hide_chat"]
        await harness.server.setVariant(variant)
        await Self.reconnect(harness, transport)
        #expect(await harness.untilSynced())
        #expect(try harness.store.chat("chat-001")?.chat.hidden == true)
        #expect(try harness.store.pendingActions().count == 1)

        await harness.server.deleteChat("chat-002")
        #expect(await eventually { (try? harness.store.chat("chat-002")) == nil })
        await #expect(throws: OpenMatesError.actionFailed) {
            try await harness.client.setPinned(true, chatID: "chat-002")
        }
        #expect(try harness.store.chat("chat-002") == nil)
        #expect(try harness.store.pendingActions().map(\.kind) == [.hideChat])
        await harness.client.close()
    }
}
