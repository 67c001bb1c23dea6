import Foundation
import TidingsCore
import TidingsNet

@testable import TidingsOpenMates

/// What the client itself read and sent about AI requests, across its connections and launches: the one fact the
/// model's "asked once" rule turns on. Asking the AI (`chat_message_added`) is not idempotent on the server, and
/// the client may legitimately send it again when none of its acknowledgements reached it (the connection ended,
/// the app closed, the deadline passed): the server may then have answered an earlier copy the client never
/// heard of. What it must never do is send it again after it read an acknowledgement for it.
final class OpenMatesAIRequestLedger: Sendable {
    private struct State {
        var acknowledged: Set<String> = []
        var resentAfterAcknowledgement: [String] = []
        var closing = false
    }
    private let state = LockedState(State())

    /// Set before the test closes the client: a frame pulled from then on may be dropped unread by the closing
    /// client, so it proves nothing about what the client knows.
    func closing(_ value: Bool) { state.withLock { $0.closing = value } }

    /// `chat:message` keys sent again after an acknowledgement of them had been read.
    var resentAfterAcknowledgement: [String] { state.withLock { $0.resentAfterAcknowledgement } }

    fileprivate func pulled(_ frame: String) {
        guard let envelope = try? OpenMatesEnvelope(text: frame) else { return }
        let payload = envelope.payload
        let acknowledges =
            (envelope.type == "chat_message_confirmed" && payload["status"]?.stringValue != "synced")
            || envelope.type == "ai_task_initiated" || envelope.type == "message_queued"
        guard acknowledges, let chat = payload.omID("chat_id"),
            let message = payload.omID("message_id") ?? payload.omID("user_message_id")
        else { return }
        state.withLock { state in
            if !state.closing { state.acknowledged.insert("\(chat):\(message)") }
        }
    }

    fileprivate func sending(_ frame: String) {
        guard let envelope = try? OpenMatesEnvelope(text: frame), envelope.type == "chat_message_added",
            let chat = envelope.payload.omID("chat_id"),
            let message = envelope.payload["message"]?.objectValue?.omID("message_id")
        else { return }
        let key = "\(chat):\(message)"
        state.withLock { state in
            if state.acknowledged.contains(key) { state.resentAfterAcknowledgement.append(key) }
        }
    }

    /// `base`'s connections, with every frame the client pulls and sends shown to the ledger. A frame counts as
    /// read when the client asks for it (the stream unfolds on demand), not when the server sent it.
    func transport(_ base: any OpenMatesTransport) -> any OpenMatesTransport { Transport(base: base, ledger: self) }

    private struct Transport: OpenMatesTransport {
        let base: any OpenMatesTransport
        let ledger: OpenMatesAIRequestLedger

        func connect() async throws -> OpenMatesChannel {
            let channel = try await base.connect()
            let reader = Reader(channel.inbound)
            let ledger = ledger
            let inbound = AsyncThrowingStream<String, any Error> {
                let frame = try await reader.next()
                if let frame { ledger.pulled(frame) }
                return frame
            }
            return OpenMatesChannel(
                inbound: inbound,
                send: { frame in
                    ledger.sending(frame)
                    try await channel.send(frame)
                }, close: channel.close)
        }
    }

    /// The base stream's iterator, advanced by the one consumer of the unfolded stream.
    private final class Reader: @unchecked Sendable {
        private var iterator: AsyncThrowingStream<String, any Error>.AsyncIterator
        init(_ stream: AsyncThrowingStream<String, any Error>) { iterator = stream.makeAsyncIterator() }
        func next() async throws -> String? { try await iterator.next() }
    }
}
