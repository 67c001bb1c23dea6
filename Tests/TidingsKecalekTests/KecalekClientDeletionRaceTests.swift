import Foundation
import Testing
import TidingsCore
import TidingsKecalek
import TidingsSandbox

/// A `message_deleted` notification that reaches the client while a sync is running (another user deleted
/// a message the server had already put in the sync's page) must not be undone when the sync stores its page.
///
/// The notification is delivered just in front of the response, so it is applied while the sync still waits
/// for it. Behind the response, it would race the sync: applied before the page is stored it is this case;
/// applied after, the page shows the message and the deletion follows as a change (asserted in
/// KecalekClientNotificationTests), and which one happens is up to the scheduler.
@Suite(.timeLimit(.minutes(1))) struct KecalekClientDeletionRaceTests {
    private let conversation = KecalekHarness.conversation

    @Test func aDeletionDuringAFullFetchIsNotResurrected() async throws {
        let injector = NotificationInjectingTransport.deleting(in: KecalekHarness.conversation, before: "get_messages")
        let harness = try await KecalekHarness(
            seeded: 4,
            transport: { server in
                injector.base = server.transport(userID: KecalekHarness.me)
                return injector
            })
        let page = await harness.client.messages(conversation: conversation)
        let doomed = try #require(injector.injectedFor)
        #expect(page.source.isFull)
        #expect(!page.messages.contains { $0.messageID == doomed })
        #expect(try harness.cache.message(conversationID: conversation, messageID: doomed) == nil)
        #expect(try harness.cache.messageCount(conversationID: conversation) == 3)
    }

    @Test func aDeletionDuringAnIncrementalSyncIsNotResurrected() async throws {
        let harness = try await KecalekHarness(seeded: 4)
        _ = await harness.client.messages(conversation: conversation)
        await harness.client.close()
        // Posted while no client of alice listens: only the next incremental sync learns of it.
        let posted = try await harness.server.post(conversation: conversation, from: "bob", text: "gone soon")
        let injector = NotificationInjectingTransport.deleting(
            in: KecalekHarness.conversation, before: "get_deleted_since")
        injector.base = harness.server.transport(userID: KecalekHarness.me)
        let client = try await harness.relaunch(through: injector)
        let page = await client.messages(conversation: conversation)
        #expect(injector.injectedFor == posted.messageID)
        #expect(page.source.isIncremental)
        #expect(!page.messages.contains { $0.messageID == posted.messageID })
        #expect(try harness.cache.message(conversationID: conversation, messageID: posted.messageID) == nil)
        #expect(try harness.cache.messageCount(conversationID: conversation) == 4)
        await client.close()
    }
}
