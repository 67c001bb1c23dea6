import Foundation
import PeerSupport
import TidingsCore
import TidingsKecalek

/// A transport for the model test that decides, from a seed, when the client sees each notification: the
/// interleaving of notifications and responses is part of the case, not up to the scheduler.
///
/// Notifications from the server are held back. In front of each response a seeded number of the held
/// ones (oldest first) is delivered, so they are applied while that request still waits; ``flushFrame``
/// sent by the server through `sendRaw` delivers all of them at that point of the stream (the client idle).
/// The client's read loop pulls frames through this transport one by one, with no task in between, so what
/// is held when a response or the flush frame arrives depends only on the server's order. It can also cut
/// the connection in front of a chosen response (a kill mid-sync).
final class ScheduledNotificationTransport: KecalekTransport, @unchecked Sendable {
    /// A frame that tells this transport to deliver every held notification; never reaches the client.
    static let flushFrame = Data(#"{"type":"test.release_held_notifications"}"#.utf8)
    // Frames are told apart by these bytes, not parsed: the client parses every response already, and the
    // model runs a thousand cases.
    private static let requestIDMarker = Data(#""request_id""#.utf8)
    private static let markReadMarker = Data(#""mark_read""#.utf8)

    private let lock = NSLock()
    private let base: any KecalekTransport
    private var rng: SplitMix64
    private var held: [Data] = []
    private var cutCountdown: Int?
    private var _discarded = 0
    private var connectionEnded = false
    /// The connection the held notifications, cut and flushes belong to; an older one's late events (its
    /// end, a frame still in flight) must not touch them.
    private var currentConnection = 0
    private var flushesSeen = 0
    private var flushesApplied = 0
    private var flushWaiters: [(after: Int, continuation: CheckedContinuation<Bool, Never>)] = []
    private var markReadsInFlight: [String: [String]] = [:]
    private var _unacknowledgedReads: Set<String> = []

    init(_ base: any KecalekTransport, seed: UInt64) {
        self.base = base
        rng = SplitMix64(seed: seed)
    }

    /// Notifications the client never saw: held when their connection ended.
    var discarded: Int { lock.withLock { _discarded } }
    /// Delivers every held notification now, while the client is idle, and returns once the client has
    /// applied them; false when the connection ended first.
    ///
    /// `send` must put ``flushFrame`` on the connection (the server's `sendRaw`). The client's read loop asks
    /// for its next frame only after it applied the one before, so that request tells that the flush is
    /// applied: no polling, no clock.
    func deliverHeld(send: @Sendable () async -> Void) async -> Bool {
        let after = lock.withLock { flushesSeen }
        await send()
        return await withCheckedContinuation { continuation in
            let done: Bool? = lock.withLock {
                if flushesApplied > after { return true }
                if connectionEnded { return false }
                flushWaiters.append((after, continuation))
                return nil
            }
            if let done { continuation.resume(returning: done) }
        }
    }

    /// IDs of every `mark_read` the client did not see accepted (its answer cut off, an error status, or no
    /// answer before the connection ended): the client keeps them pending and sends them again, which the
    /// server may count as redundant (it applied the first one, or another device read them meanwhile) though
    /// the client cannot know.
    var unacknowledgedReads: Set<String> {
        lock.withLock { _unacknowledgedReads.union(markReadsInFlight.values.joined()) }
    }

    /// Cuts the connection in front of the `ordinal`th response from now (1 for the next one).
    func cut(beforeResponse ordinal: Int) { lock.withLock { cutCountdown = ordinal } }

    /// Forgets a cut that has not happened.
    func cancelCut() { lock.withLock { cutCountdown = nil } }

    func connect() async throws -> KecalekChannel {
        let channel = try await base.connect()
        let (connection, abandoned): (Int, [CheckedContinuation<Bool, Never>]) = lock.withLock {
            currentConnection += 1
            // A `mark_read` still unanswered when its connection ended stays unacknowledged: request IDs are
            // only unique per client, so a relaunched client's response must not settle it.
            _unacknowledgedReads.formUnion(markReadsInFlight.values.joined())
            markReadsInFlight = [:]
            _discarded += held.count
            held = []
            cutCountdown = nil
            connectionEnded = false
            flushesApplied = flushesSeen
            defer { flushWaiters = [] }
            return (currentConnection, flushWaiters.map(\.continuation))
        }
        for waiter in abandoned { waiter.resume(returning: false) }
        let source = FrameSource(channel.inbound.makeAsyncIterator())
        let stream = AsyncThrowingStream<Data, any Error>(unfolding: {
            try await self.nextFrame(source, channel: channel, connection: connection)
        })
        return KecalekChannel(
            inbound: stream,
            send: { frame in
                self.noteRequest(frame)
                try await channel.send(frame)
            }, close: channel.close)
    }

    private enum Routing {
        case deliver([Data])
        case cut
    }

    private func nextFrame(_ source: FrameSource, channel: KecalekChannel, connection: Int) async throws -> Data? {
        while true {
            if let ready = source.takeReady() { return ready }
            // Asked for a frame with none ready: the client applied everything handed over so far.
            for waiter in lock.withLock({ takeAppliedFlushes(connection) }) { waiter.resume(returning: true) }
            guard let frame = try await source.next() else {
                endConnection(connection)
                return nil
            }
            switch route(frame, connection: connection) {
            case .deliver(let frames): source.enqueue(frames)
            case .cut:
                endConnection(connection)
                await channel.close()
                throw KecalekError.connectionLost
            }
        }
    }

    /// Under the lock: marks the flushes seen so far as applied and returns their waiters.
    private func takeAppliedFlushes(_ connection: Int) -> [CheckedContinuation<Bool, Never>] {
        guard connection == currentConnection else { return [] }
        flushesApplied = flushesSeen
        let ready = flushWaiters.filter { $0.after < flushesApplied }
        flushWaiters.removeAll { $0.after < flushesApplied }
        return ready.map(\.continuation)
    }

    private func endConnection(_ connection: Int) {
        let waiters: [CheckedContinuation<Bool, Never>] = lock.withLock {
            guard connection == currentConnection else { return [] }
            _discarded += held.count
            held = []
            connectionEnded = true
            defer { flushWaiters = [] }
            return flushWaiters.map(\.continuation)
        }
        for waiter in waiters { waiter.resume(returning: false) }
    }

    private func noteRequest(_ frame: Data) {
        guard frame.range(of: Self.markReadMarker) != nil, let request = try? KecalekRequest(frame: frame),
            request.type == "mark_read"
        else { return }
        let ids = (request.parameters["message_ids"]?.arrayValue ?? []).compactMap(\.stringValue)
        lock.withLock { markReadsInFlight[request.requestID] = ids }
    }

    private func route(_ frame: Data, connection: Int) -> Routing {
        // A closed client's connection: it applies nothing any more, and nothing here is its business.
        guard lock.withLock({ connection == currentConnection }) else { return .deliver([frame]) }
        if frame == Self.flushFrame {
            return lock.withLock {
                flushesSeen += 1
                defer { held = [] }
                return .deliver(held)
            }
        }
        guard frame.range(of: Self.requestIDMarker) != nil else {
            lock.withLock { held.append(frame) }
            return .deliver([])
        }
        // A response: parsed only while a `mark_read` waits for one (to learn whether it was accepted).
        let waiting = lock.withLock { !markReadsInFlight.isEmpty }
        let response: KecalekResponse? =
            if waiting, case .response(let parsed)? = try? KecalekInbound(frame: frame) { parsed } else { nil }
        return lock.withLock {
            let marked = response.flatMap { markReadsInFlight.removeValue(forKey: $0.requestID) }
            if let response, !response.isOK { _unacknowledgedReads.formUnion(marked ?? []) }
            if let countdown = cutCountdown {
                cutCountdown = countdown - 1
                if countdown <= 1 {
                    cutCountdown = nil
                    _unacknowledgedReads.formUnion(marked ?? [])
                    return .cut
                }
            }
            let count = Int.random(in: 0...held.count, using: &rng)
            let released = Array(held.prefix(count))
            held.removeFirst(count)
            return .deliver(released + [frame])
        }
    }
}

/// The base connection's frames, pulled only when the client asks for one, and the frames ready for it.
private final class FrameSource: @unchecked Sendable {
    // Only the client's read loop pulls, one frame at a time: no two calls overlap.
    private var iterator: AsyncThrowingStream<Data, any Error>.AsyncIterator
    private var ready: [Data] = []

    init(_ iterator: AsyncThrowingStream<Data, any Error>.AsyncIterator) { self.iterator = iterator }

    func next() async throws -> Data? { try await iterator.next() }

    func takeReady() -> Data? { ready.isEmpty ? nil : ready.removeFirst() }

    func enqueue(_ frames: [Data]) { ready += frames }
}
