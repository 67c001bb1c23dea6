import Foundation
import Testing
import TidingsCore
import TidingsSandbox

@testable import TidingsOpenMates

/// Refusals in the public server's form: an `error` naming the chat (`{message, chat_id}`) and no
/// `client_action_id`. The clock never moves here, so only a refusal the client matches can end a try.
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
        variant.refusedActions = ["pin_chat"]
        variant.refusalsNameTheChatOnly = true
        await harness.server.setVariant(variant)
        try await harness.client.setPinned(true, chatID: "chat-001")
        // Three refusals, three tries, then the action fails for good with the server's own words.
        #expect(
            try await eventually(maxYields: 200_000) {
                try harness.store.pendingActions().isEmpty && !harness.store.failedActions().isEmpty
            })
        #expect(await harness.received("pin_chat").count == 3)
        let failed = try harness.store.failedActions()
        #expect(failed.map(\.action.kind) == [.pinChat])
        #expect(failed.first?.reason.contains("pin_chat refused") == true)
        #expect(try harness.store.chat("chat-001")?.chat.pinned == false)
        await harness.client.close()
    }

    @Test func anErrorNamingAnotherChatOrAnotherActionLeavesTheTryRunning() async throws {
        let harness = try await Self.synced()
        var variant = OpenMatesSandboxVariant()
        variant.unansweredActions = ["pin_chat"]
        await harness.server.setVariant(variant)
        try await harness.client.setPinned(true, chatID: "chat-001")
        #expect(await eventually { await harness.received("pin_chat").count == 1 })
        func tries() throws -> Int? { try harness.store.pendingActions().first?.tries }
        // Not this action's: another chat, or another action's ID (even on this chat).
        await harness.server.push("error", ["message": "nope", "chat_id": "chat-002"])
        await harness.server.push(
            "error", ["message": "nope", "chat_id": "chat-001", "client_action_id": "999999"])
        await harness.server.push("error", ["message": "no names"])
        #expect(await eventually { await harness.client.status.lastError?.contains("no names") == true })
        #expect(try tries() == 0)
        #expect(await harness.received("pin_chat").count == 1)
        // This action's chat and no action ID: one failed try, sent again.
        await harness.server.push("error", ["message": "refused here", "chat_id": "chat-001"])
        #expect(try await eventually(maxYields: 200_000) { try tries() == 1 })
        #expect(await eventually { await harness.received("pin_chat").count == 2 })
        await harness.client.close()
    }

    /// The public server's `delete_message` handler reads `chatId` and `messageId` and echoes `message_deleted`
    /// to every device, the acting one included: the replayed action carries those names too, so it is applied
    /// and acknowledged there.
    @Test func aDeleteReadInThePublicServersFieldNamesIsAppliedAndAcknowledged() async throws {
        let harness = try await Self.synced()
        var variant = OpenMatesSandboxVariant()
        variant.deleteMessageReadsCamelCase = true
        await harness.server.setVariant(variant)
        let messageID = try #require(try harness.store.messages(chatID: "chat-001").first?.messageID)
        try await harness.client.deleteMessage(chatID: "chat-001", messageID: messageID)
        #expect(try await eventually(maxYields: 200_000) { try harness.store.pendingActions().isEmpty })
        #expect(try harness.store.failedActions().isEmpty)
        #expect(await harness.server.appliedActions == ["delete_message:chat-001:\(messageID)"])
        #expect(await harness.received("delete_message").count == 1)
        await harness.client.close()
    }
}
