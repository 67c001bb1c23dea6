import Foundation
import Synchronization
import TidingsCore
import TidingsNet

/// One client connected to one Socket.IO namespace of a sandbox server.
///
/// Guarantees: an emit's packet and its binary attachments leave together, in order; an ack the server
/// waits for resolves exactly once (the client's answer, the deadline, or the session's end).
public final class SandboxSocketIOSocket: Sendable {
    /// The Socket.IO id sent to the client in the connect answer.
    public let id: String
    /// The namespace (`/`, `/chat`).
    public let namespace: String
    /// The auth payload of the client's connect packet.
    public let auth: JSONValue?
    let session: SandboxEngineIOSession
    private let acks = Mutex<(next: Int, waiting: [Int: CheckedContinuation<[JSONValue]?, Never>])>((0, [:]))

    init(id: String, namespace: String, auth: JSONValue?, session: SandboxEngineIOSession) {
        self.id = id
        self.namespace = namespace
        self.auth = auth
        self.session = session
    }

    /// Emits `event` to the client.
    public func emit(_ event: String, _ arguments: [JSONValue]) async {
        await send(SocketIOPacket.event(event, arguments, namespace: namespace))
    }

    /// Emits `event` and waits for the client's ack, at most `timeout`.
    ///
    /// - Throws: `SocketIOError/ackTimeout` when no ack came in time, `SocketIOError/disconnected`
    ///   when the session ended first.
    public func emitWithAck(_ event: String, _ arguments: [JSONValue], timeout: Duration = .seconds(10))
        async throws -> [JSONValue]
    {
        let id = acks.withLock { state in
            defer { state.next += 1 }
            return state.next
        }
        let deadline = Task {
            try await Task.sleep(for: timeout)
            self.resolve(id, with: nil)
        }
        defer { deadline.cancel() }
        let answer = await withCheckedContinuation { continuation in
            acks.withLock { $0.waiting[id] = continuation }
            Task { await send(SocketIOPacket.event(event, arguments, namespace: namespace, id: id)) }
        }
        guard let answer else { throw await session.isClosed ? SocketIOError.disconnected : SocketIOError.ackTimeout }
        return answer
    }

    /// Ends this namespace's connection (a Socket.IO disconnect packet).
    public func disconnect() async { await send(SocketIOPacket(.disconnect, namespace: namespace)) }

    func send(_ packet: SocketIOPacket) async {
        let (text, attachments) = packet.encoded()
        await session.send([.text(text)] + attachments.map { .binary($0) })
    }

    func resolve(_ id: Int, with arguments: [JSONValue]?) {
        acks.withLock { $0.waiting.removeValue(forKey: id) }?.resume(returning: arguments)
    }

    func failAll() {
        let waiting = acks.withLock { state in
            defer { state.waiting = [:] }
            return state.waiting
        }
        for continuation in waiting.values { continuation.resume(returning: nil) }
    }
}
