import Foundation
import TidingsNet

/// One Engine.IO 4 session on the server: its outbound queue for long-polling, or its WebSocket once
/// upgraded, its heartbeat, and the messages the client sent.
///
/// Guarantees: packets go out in the order they were sent, over polling before the upgrade and over the
/// WebSocket after it, never both; a session whose client stops answering pings closes after
/// `pingInterval + pingTimeout`; closing wakes a waiting poll and finishes ``messages``.
public actor SandboxEngineIOSession {
    /// The session id (`sid`).
    public nonisolated let id: String
    /// Message packets from the client, in order; finishes when the session closes.
    public nonisolated let messages: AsyncStream<EngineIOPacket.Body>
    private let continuation: AsyncStream<EngineIOPacket.Body>.Continuation
    private var queue: [EngineIOPacket] = []
    private var pollWaiter: CheckedContinuation<[EngineIOPacket]?, Never>?
    private var socket: LoopbackWebSocketConnection?
    private var awaitingPong = false
    /// Set once the probe succeeded: from then on a poll never waits, since the client waits for its
    /// last poll to end before it sends `upgrade` (a poll that arrives after the probe would otherwise
    /// hold the upgrade until the next ping).
    private var upgrading = false
    private(set) var isClosed = false
    private var heartbeat: Task<Void, Never>?
    private let onClose: @Sendable (String) -> Void

    init(id: String, onClose: @escaping @Sendable (String) -> Void) {
        self.id = id
        self.onClose = onClose
        (messages, continuation) = AsyncStream.makeStream()
    }

    /// Whether the session runs over its WebSocket now.
    public var isUpgraded: Bool { socket != nil }

    /// Sends message packets (text or binary) as one unit: nothing else is sent between them.
    public func send(_ bodies: [EngineIOPacket.Body]) async {
        await sendPackets(bodies.map { EngineIOPacket(.message, $0) })
    }

    /// Closes the session: the client gets a close packet if it can still be reached.
    public func close() async {
        guard !isClosed else { return }
        await sendPackets([EngineIOPacket(.close)])
        finish()
    }

    /// Cuts the transport without a close packet, as a network failure would.
    public func abort() {
        socket?.abort()
        finish()
    }

    func startHeartbeat(interval: Duration, timeout: Duration, clock: any Clock<Duration>) {
        heartbeat = Task { [weak self] in
            while !Task.isCancelled {
                do { try await clock.sleep(for: interval) } catch { return }
                guard let self, await self.ping() else { return }
                do { try await clock.sleep(for: timeout) } catch { return }
                guard await self.pongMissing() == false else {
                    await self.abort()
                    return
                }
            }
        }
    }

    private func ping() async -> Bool {
        guard !isClosed else { return false }
        awaitingPong = true
        await sendPackets([EngineIOPacket(.ping)])
        return true
    }

    private func pongMissing() -> Bool { awaitingPong }

    func sendPackets(_ packets: [EngineIOPacket]) async {
        guard !isClosed else { return }
        if let socket {
            for packet in packets {
                do {
                    switch packet.frame(version: .v4) {
                    case .text(let text): try await socket.send(text: text)
                    case .binary(let bytes): try await socket.send(binary: bytes)
                    }
                } catch {
                    finish()
                    return
                }
            }
            return
        }
        queue += packets
        if let waiter = pollWaiter {
            pollWaiter = nil
            let batch = queue
            queue = []
            waiter.resume(returning: batch)
        }
    }

    /// The packets for one long-poll: what is queued, or the next packets sent; nil once closed.
    func poll() async -> [EngineIOPacket]? {
        if !queue.isEmpty {
            defer { queue = [] }
            return queue
        }
        guard !isClosed else { return nil }
        if upgrading || socket != nil { return [EngineIOPacket(.noop)] }
        // A second poll while one waits is a client error; the first one ends empty-handed (noop).
        pollWaiter?.resume(returning: [EngineIOPacket(.noop)])
        return await withTaskCancellationHandler {
            await withCheckedContinuation { pollWaiter = $0 }
        } onCancel: {
            Task { await self.cancelPoll() }
        }
    }

    private func cancelPoll() {
        pollWaiter?.resume(returning: nil)
        pollWaiter = nil
    }

    /// Handles one packet from the client (over polling or the WebSocket).
    func receive(_ packet: EngineIOPacket) async {
        switch packet.kind {
        case .pong: awaitingPong = false
        case .ping: await sendPackets([EngineIOPacket(.pong, packet.body)])
        case .message: continuation.yield(packet.body)
        case .close: finish()
        case .open, .upgrade, .noop: break
        }
    }

    /// The probe succeeded: end a waiting poll with a noop so the client can send `upgrade`.
    func prepareUpgrade() {
        upgrading = true
        if let waiter = pollWaiter {
            pollWaiter = nil
            waiter.resume(returning: queue + [EngineIOPacket(.noop)])
            queue = []
        }
    }

    /// Moves the session onto `socket` and flushes what was queued for polling.
    func attach(_ socket: LoopbackWebSocketConnection) async {
        self.socket = socket
        let pending = queue
        queue = []
        pollWaiter?.resume(returning: [EngineIOPacket(.noop)])
        pollWaiter = nil
        await sendPackets(pending)
    }

    private func finish() {
        guard !isClosed else { return }
        isClosed = true
        heartbeat?.cancel()
        pollWaiter?.resume(returning: nil)
        pollWaiter = nil
        continuation.finish()
        let socket = self.socket
        if let socket { Task { await socket.close() } }
        onClose(id)
    }
}
