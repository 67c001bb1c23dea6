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
        let injector = DeletionInjectingTransport(before: "get_messages")
        let harness = try await KecalekHarness(
            seeded: 4,
            transport: { server in
                injector.base = server.transport(userID: KecalekHarness.me)
                return injector
            })
        let page = await harness.client.messages(conversation: conversation)
        let doomed = try #require(injector.injectedID)
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
        let injector = DeletionInjectingTransport(before: "get_deleted_since")
        injector.base = harness.server.transport(userID: KecalekHarness.me)
        let client = KecalekClient(
            configuration: .init(userID: KecalekHarness.me), transport: injector, cache: harness.cache,
            decryptor: harness.server.cipher, clock: harness.clock)
        try await client.connect()
        let page = await client.messages(conversation: conversation)
        #expect(injector.injectedID == posted.messageID)
        #expect(page.source.isIncremental)
        #expect(!page.messages.contains { $0.messageID == posted.messageID })
        #expect(try harness.cache.message(conversationID: conversation, messageID: posted.messageID) == nil)
        #expect(try harness.cache.messageCount(conversationID: conversation) == 4)
        await client.close()
    }
}

/// Wraps a transport and, once, puts a `message_deleted` notification for the newest message of the
/// first `get_messages` response directly in front of the response of type `after`.
private final class DeletionInjectingTransport: KecalekTransport, Sendable {
    private struct State {
        var _base: (any KecalekTransport)?
        var target: String?
        var _injectedID: String?
    }
    private let state = LockedState(State())
    private let before: String

    init(before: String) { self.before = before }

    var base: (any KecalekTransport)? {
        get { state.withLock { locked in locked._base } }
        set { state.withLock { locked in locked._base = newValue } }
    }

    /// The message the injected notification deleted, once it was sent.
    var injectedID: String? { state.withLock { locked in locked._injectedID } }

    func connect() async throws -> KecalekChannel {
        guard let base else { throw KecalekError.notConnected }
        let channel = try await base.connect()
        let (stream, continuation) = AsyncThrowingStream<Data, any Error>.makeStream(bufferingPolicy: .unbounded)
        Task {
            do {
                for try await frame in channel.inbound {
                    if let extra = injection(before: frame) { continuation.yield(extra) }
                    continuation.yield(frame)
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        return KecalekChannel(inbound: stream, send: channel.send, close: channel.close)
    }

    private func injection(before frame: Data) -> Data? {
        guard case .response(let response)? = try? KecalekInbound(frame: frame) else { return nil }
        return state.withLock { locked in
            guard locked._injectedID == nil else { return nil }
            if response.type == "get_messages", locked.target == nil {
                locked.target = response.data["messages"]?.arrayValue?.last?["message_id"]?.identifierValue
            }
            guard response.type == before, let target = locked.target else { return nil }
            locked._injectedID = target
            return KecalekNotification.messageDeleted(conversationID: KecalekHarness.conversation, messageIDs: [target])
                .encoded()
        }
    }
}
