import Foundation
import Testing
import TidingsCore
import TidingsSandbox

@testable import TidingsOpenMates

/// Refusals in the public server's forms: an `error` naming the chat (`{message, chat_id}`; no server event
/// carries an action ID) and `chat_key_mismatch` naming the chat and message. The clock never moves here, so only a refusal the client matches can end a try.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesActionRefusalTests {
    private static func synced() async throws -> OpenMatesClientHarness {
        let server = OpenMatesSandboxServer()
        await server.seed(parents: 3)
        let harness = try OpenMatesClientHarness(server: server)
        await harness.client.start()
        #expect(await harness.untilSynced())
        return harness
    }

    @Test func aRefusalNamingOnlyTheChatEndsTheTryAtOnceWithTheServersReason() async throws {
        let harness = try await Self.synced()
        var variant = OpenMatesSandboxVariant()
        variant.refusedActions = ["update_chat"]
        await harness.server.setVariant(variant)
        try await harness.client.setPinned(true, chatID: "chat-001")
        // Three refusals, three tries, then the action fails for good with the server's own words.
        #expect(
            try await eventually(maxYields: 200_000) {
                try harness.store.pendingActions().isEmpty && !harness.store.failedActions().isEmpty
            })
        #expect(await harness.received("update_chat").count == 3)
        let failed = try harness.store.failedActions()
        #expect(failed.map(\.action.kind) == [.pin])
        #expect(failed.first?.reason.contains("update_chat refused") == true)
        #expect(try harness.store.chat("chat-001")?.chat.pinned == false)
        await harness.client.close()
    }

    @Test func anErrorNamingAnotherChatOrAnotherActionLeavesTheTryRunning() async throws {
        let harness = try await Self.synced()
        var variant = OpenMatesSandboxVariant()
        variant.unansweredActions = ["encrypted_chat_metadata"]
        await harness.server.setVariant(variant)
        try await harness.client.sendMessage(
            chatID: "chat-001", messageID: "local-1", encryptedContent: "sealed", createdAt: 1_700_000_100)
        #expect(await eventually { await harness.received("encrypted_chat_metadata").count == 1 })
        func tries() throws -> Int? { try harness.store.pendingActions().first?.tries }
        // Not this action's: another chat, a key mismatch about another message of this chat, no chat at all.
        await harness.server.push("error", ["message": "nope", "chat_id": "chat-002"])
        await harness.server.push("chat_key_mismatch", ["chat_id": "chat-001", "message_id": "other", "code": "x"])
        await harness.server.push("error", ["message": "no names"])
        #expect(await eventually { await harness.client.status.lastError?.contains("no names") == true })
        #expect(try tries() == 0)
        #expect(await harness.received("encrypted_chat_metadata").count == 1)
        // This action's chat: one failed try, sent again.
        await harness.server.push("error", ["message": "refused here", "chat_id": "chat-001"])
        #expect(try await eventually(maxYields: 200_000) { try tries() == 1 })
        #expect(await eventually { await harness.received("encrypted_chat_metadata").count == 2 })
        // The reference server's key refusal naming this message: another failed try, with its words.
        await harness.server.push(
            "chat_key_mismatch",
            ["chat_id": "chat-001", "message_id": "local-1", "code": "chat_key_mismatch", "message": "key mismatch"])
        #expect(try await eventually(maxYields: 200_000) { try tries() == 2 })
        #expect(try harness.store.pendingActions().first?.lastError?.contains("key mismatch") == true)
        await harness.client.close()
    }

    /// The public server's `delete_message` handler reads `chatId` and `messageId` (snake_case alone is refused)
    /// and echoes `message_deleted` to every device, the acting one included.
    @Test func aDeleteReadInThePublicServersFieldNamesIsAppliedAndAcknowledged() async throws {
        let harness = try await Self.synced()
        let messageID = try #require(try harness.store.messages(chatID: "chat-001").first?.messageID)
        try await harness.client.deleteMessage(chatID: "chat-001", messageID: messageID)
        #expect(try await eventually(maxYields: 200_000) { try harness.store.pendingActions().isEmpty })
        #expect(try harness.store.failedActions().isEmpty)
        #expect(await harness.server.appliedActions == ["delete_message:chat-001:\(messageID)"])
        #expect(await harness.received("delete_message").count == 1)
        #expect(await harness.received("delete_message").first?.payload["chat_id"] == nil)
        await harness.client.close()
    }
}
