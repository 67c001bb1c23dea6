import Foundation
import Testing
import TidingsCore
import TidingsKecalek
import TidingsSandbox

/// Reactions and pins announced while a sync runs are newer than its pages: the sync's write must not
/// lose or overwrite them (issue 9). The notifications are delivered in front of the `get_deleted_since`
/// response, so they are applied while the sync still waits: deterministic, no scheduling involved.
@Suite(.timeLimit(.minutes(1))) struct KecalekReactionRaceTests {
    private let conversation = KecalekHarness.conversation

    @Test func reactionsAndPinsOfANewMessageDuringAnIncrementalSyncAreKept() async throws {
        let harness = try await KecalekHarness(seeded: 4)
        _ = await harness.client.messages(conversation: conversation)
        await harness.client.close()
        let posted = try await harness.server.post(conversation: conversation, from: "bob", text: "nová")
        let reaction = KecalekReaction(userID: "carol", emoji: "🎉")
        let injector = NotificationInjectingTransport(before: "get_deleted_since") { target in
            [
                .messageReacted(conversationID: KecalekHarness.conversation, messageID: target, change: .add(reaction)),
                .messagePinned(conversationID: KecalekHarness.conversation, messageID: target, pinned: true),
            ]
        }
        injector.base = harness.server.transport(userID: KecalekHarness.me)
        let client = KecalekClient(
            configuration: .init(userID: KecalekHarness.me), transport: injector, cache: harness.cache,
            decryptor: harness.server.cipher, clock: harness.clock)
        try await client.connect()
        let page = await client.messages(conversation: conversation)
        #expect(injector.injectedFor == posted.messageID)
        #expect(page.newMessageIDs == [posted.messageID])
        let stored = try #require(try harness.cache.message(conversationID: conversation, messageID: posted.messageID))
        #expect(stored.reactions == [reaction])
        #expect(stored.pinned)
        #expect(page.messages.last?.reactions == [reaction])
        await client.close()
    }
}

/// Wraps a transport and, once, puts the notifications `make(target)` returns for the newest message of
/// the first `get_messages` response directly in front of the response of type `before`.
private final class NotificationInjectingTransport: KecalekTransport, Sendable {
    private struct State {
        var _base: (any KecalekTransport)?
        var target: String?
        var _injectedFor: String?
    }
    private let state = LockedState(State())
    private let before: String
    private let make: @Sendable (String) -> [KecalekNotification]

    init(before: String, make: @escaping @Sendable (String) -> [KecalekNotification]) {
        self.before = before
        self.make = make
    }

    var base: (any KecalekTransport)? {
        get { state.withLock { locked in locked._base } }
        set { state.withLock { locked in locked._base = newValue } }
    }

    /// The message the injected notifications were about, once they were sent.
    var injectedFor: String? { state.withLock { locked in locked._injectedFor } }

    func connect() async throws -> KecalekChannel {
        guard let base else { throw KecalekError.notConnected }
        let channel = try await base.connect()
        let (stream, continuation) = AsyncThrowingStream<Data, any Error>.makeStream(bufferingPolicy: .unbounded)
        Task {
            do {
                for try await frame in channel.inbound {
                    for extra in injections(before: frame) { continuation.yield(extra) }
                    continuation.yield(frame)
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        return KecalekChannel(inbound: stream, send: channel.send, close: channel.close)
    }

    private func injections(before frame: Data) -> [Data] {
        guard case .response(let response)? = try? KecalekInbound(frame: frame) else { return [] }
        return state.withLock { locked in
            guard locked._injectedFor == nil else { return [] }
            if response.type == "get_messages", locked.target == nil {
                let ids = (response.data["messages"]?.arrayValue ?? []).compactMap { $0["message_id"]?.identifierValue }
                locked.target = ids.max()
            }
            guard response.type == before, let target = locked.target else { return [] }
            locked._injectedFor = target
            return make(target).map { $0.encoded() }
        }
    }
}
