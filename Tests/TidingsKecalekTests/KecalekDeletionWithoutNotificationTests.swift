import Foundation
import Testing
import TidingsCore
import TidingsKecalek
import TidingsSandbox

/// Deletions are learned through `get_deleted_since` when no `message_deleted` ever comes (issue 9).
@Suite(.timeLimit(.minutes(1))) struct KecalekDeletionWithoutNotificationTests {
    let conversation = KecalekHarness.conversation

    @Test func aDeletionInTheSameSecondAsTheSyncPointIsLearned() async throws {
        let harness = try await KecalekHarness(reconnects: false)
        await harness.server.setVariant(.init(resolution: .second, notifications: .none))
        try await harness.server.seed(conversation: conversation, from: ["bob"], count: 5)
        let first = await harness.client.messages(conversation: conversation)
        try #require(first.messages.count == 5)
        // Still the same second: the tombstone carries the sync point's own timestamp.
        let doomed = first.messages[2].messageID
        await harness.server.delete(conversation: conversation, messageID: doomed)
        let second = await harness.client.messages(conversation: conversation)
        #expect(second.deletedMessageIDs == [doomed])
        #expect(try harness.cache.message(conversationID: conversation, messageID: doomed) == nil)
        await harness.client.close()
    }

    @Test func aNewMessageStoredFromItsNotificationDoesNotHideAnEarlierDeletion() async throws {
        let harness = try await KecalekHarness()
        await harness.server.setVariant(.init(resolution: .second, notifications: .withoutDeletions))
        try await harness.server.seed(conversation: conversation, from: ["bob"], count: 5)
        let first = await harness.client.messages(conversation: conversation)
        try #require(first.messages.count == 5)
        await harness.server.advanceTime(by: .seconds(3))
        let doomed = first.messages[1].messageID
        await harness.server.delete(conversation: conversation, messageID: doomed)
        await harness.server.advanceTime(by: .seconds(3))
        let posted = try await harness.server.post(conversation: conversation, from: "bob", text: "po smazání")
        // The conversation is current, so the notification is stored directly, newer than the deletion.
        await harness.recorder.wait {
            if case .messagesStored(_, let ids) = $0 { ids == [posted.messageID] } else { false }
        }
        let second = await harness.client.messages(conversation: conversation)
        #expect(second.deletedMessageIDs == [doomed])
        #expect(try harness.cache.message(conversationID: conversation, messageID: doomed) == nil)
        #expect(try harness.cache.message(conversationID: conversation, messageID: posted.messageID) != nil)
        await harness.client.close()
    }
}
