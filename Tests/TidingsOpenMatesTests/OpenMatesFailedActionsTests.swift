import Foundation
import Testing
import TidingsCore
import TidingsSandbox

@testable import TidingsOpenMates

/// A failed offline action's reason outlives its one announcement: kept durably until dismissed.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesFailedActionsTests {
    @Test func aRefusedActionStaysReadableForANewSubscriberAndAfterARelaunchUntilDismissed() async throws {
        let directory = try OpenMatesTemporaryDirectory()
        let path = directory.path("om.sqlite")
        let server = OpenMatesSandboxServer()
        await server.seed(parents: 3)
        var variant = OpenMatesSandboxVariant()
        variant.refusedActions = ["update_chat"]
        await server.setVariant(variant)
        let first = try OpenMatesClientHarness(server: server, store: OpenMatesStore(path: path))
        await first.client.start()
        #expect(await first.untilSynced())
        let queued = try await first.client.setPinned(true, chatID: "chat-001")
        var announced: OpenMatesError?
        #expect(
            await first.until { change in
                if case .actionFailed(_, let error) = change { announced = error }
                return announced != nil
            })
        let error = try #require(announced)

        // A subscriber that came after the announcement reads it from the client.
        let failed = try await first.client.failedActions()
        #expect(failed.map(\.id) == [queued.id])
        #expect(failed.first?.action.kind == .pin)
        #expect(failed.first?.action.chatID == "chat-001")
        #expect(failed.first?.action.tries == 3)
        #expect(failed.first?.reason == error.detail)
        #expect(failed.first?.reason.contains("update_chat refused") == true)
        #expect(failed.first?.error == .actionFailed)
        #expect(failed.first?.error.chatIDs == ["chat-001"])
        #expect(try first.store.pendingActions().isEmpty)
        // Resetting the store on purpose keeps the user's failures.
        try await first.client.resetLocalStore()
        #expect(try await first.client.failedActions() == failed)
        await first.client.close()
        first.store.database.close()

        let relaunched = try OpenMatesClientHarness(server: server, store: OpenMatesStore(path: path))
        #expect(try await relaunched.client.failedActions() == failed)
        try await relaunched.client.dismissFailedAction(id: queued.id)
        #expect(try await relaunched.client.failedActions().isEmpty)
        // Dismissing what is gone changes nothing and does not throw.
        try await relaunched.client.dismissFailedAction(id: queued.id)
        await relaunched.client.close()
        relaunched.store.database.close()
        let again = try OpenMatesStore(path: path)
        #expect(try again.failedActions().isEmpty)
    }

    @Test func anActionOnAChatTheServerDeletedIsKeptAsFailedAndLogoutErasesIt() async throws {
        let server = OpenMatesSandboxServer()
        await server.seed(parents: 3)
        var variant = OpenMatesSandboxVariant()
        variant.unansweredActions = ["encrypted_chat_metadata"]
        await server.setVariant(variant)
        let harness = try OpenMatesClientHarness(server: server)
        await harness.client.start()
        #expect(await harness.untilSynced())
        try await harness.client.sendMessage(
            chatID: "chat-002", messageID: "local-1", encryptedContent: "sealed", createdAt: 1_700_000_100)
        #expect(await eventually { await harness.received("encrypted_chat_metadata").count == 1 })
        await server.deleteChat("chat-002")
        #expect(
            await harness.until { change in
                if case .actionFailed = change { return true }
                return false
            })
        let failed = try await harness.client.failedActions()
        #expect(failed.map(\.action.kind) == [.storeMessage])
        #expect(failed.first?.reason == "the chat was deleted")
        try await harness.client.logout()
        #expect(try harness.store.failedActions().isEmpty)
    }

    @Test func aStoreWrittenBeforeFailedActionsWereKeptIsMigratedInPlace() throws {
        let directory = try OpenMatesTemporaryDirectory()
        let path = directory.path("om.sqlite")
        do {
            let store = try OpenMatesStore(path: path)
            try store.apply([.upsertChat(OpenMatesChat(chatID: "c1", lastEdited: 1000))])
            try store.enqueue(OpenMatesPendingAction(kind: .pin, chatID: "c1", payload: ["pinned": true]))
            // What a store of schema version 1 looks like: no table of failed actions.
            try store.database.writeWithoutTransaction { db in
                try db.execute("DROP TABLE om_failed_actions")
                try db.execute("PRAGMA user_version = 1")
            }
            store.database.close()
        }
        let migrated = try OpenMatesStore(path: path)
        #expect(migrated.openReport.migratedFrom == 1)
        #expect(migrated.openReport.recovery == nil)
        #expect(migrated.healedTables.isEmpty)
        #expect(try migrated.chatList().map(\.chatID) == ["c1"])
        let pending = try migrated.pendingActions()
        #expect(pending.map(\.kind) == [.pin])
        try migrated.abandon(try #require(pending.first), reason: "refused")
        #expect(try migrated.failedActions().map(\.reason) == ["refused"])
    }
}
