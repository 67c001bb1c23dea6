import Foundation
import TidingsCore
import TidingsKecalek

/// Wraps a transport and, once, puts notifications directly in front of the first response of type
/// `before`, so they are applied while the request that waits for that response is still waiting:
/// deterministic, no racing tasks.
///
/// The notifications are made from the *target*: the newest message ID of the first `get_messages`
/// response (by `pick`, the last one by default). Used by the reaction and deletion race tests.
final class NotificationInjectingTransport: KecalekTransport, Sendable {
    private struct State {
        var base: (any KecalekTransport)?
        var target: String?
        var injectedFor: String?
    }
    private let state = LockedState(State())
    private let before: String
    private let pick: @Sendable ([String]) -> String?
    private let make: @Sendable (String) -> [KecalekNotification]

    /// - Parameters:
    ///   - before: The response type the notifications go in front of.
    ///   - pick: Chooses the target among the first `get_messages` response's message IDs (in page order).
    ///   - make: The notifications about the target.
    init(
        before: String, pick: @escaping @Sendable ([String]) -> String? = { $0.last },
        make: @escaping @Sendable (String) -> [KecalekNotification]
    ) {
        self.before = before
        self.pick = pick
        self.make = make
    }

    /// Deletes the target by a `message_deleted` notification in `conversationID`.
    static func deleting(in conversationID: String, before: String) -> NotificationInjectingTransport {
        NotificationInjectingTransport(before: before) { target in
            [.messageDeleted(conversationID: conversationID, messageIDs: [target])]
        }
    }

    var base: (any KecalekTransport)? {
        get { state.withLock { locked in locked.base } }
        set { state.withLock { locked in locked.base = newValue } }
    }

    /// The message the injected notifications were about, once they were sent.
    var injectedFor: String? { state.withLock { locked in locked.injectedFor } }

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
            guard locked.injectedFor == nil else { return [] }
            if response.type == "get_messages", locked.target == nil {
                let ids = (response.data["messages"]?.arrayValue ?? []).compactMap { $0["message_id"]?.identifierValue }
                locked.target = pick(ids)
            }
            guard response.type == before, let target = locked.target else { return [] }
            locked.injectedFor = target
            return make(target).map { $0.encoded() }
        }
    }
}
