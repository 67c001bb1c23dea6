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
final class ScheduledNotificationTransport: KecalekTransport, Sendable {
    /// A frame that tells this transport to deliver every held notification; never reaches the client.
    static let flushFrame = Data(#"{"type":"test.release_held_notifications"}"#.utf8)
    // Frames are told apart by these bytes, not parsed: the client parses every response already, and the
    // model runs a thousand cases.
    private static let requestIDMarker = Data(#""request_id""#.utf8)
    private static let markReadMarker = Data(#""mark_read""#.utf8)

    private let base: any KecalekTransport
    private let state: LockedState<State>

    private struct State {
        var rng: SplitMix64
        var held: [Data] = []
        var cutCountdown: Int?
        var discarded = 0
        var connectionEnded = false
        /// The connection the held notifications, cut and flushes belong to; an older one's late events (its
        /// end, a frame still in flight) must not touch them.
        var currentConnection = 0
        var flushesSeen = 0
        var flushesApplied = 0
        var flushWaiters: [(after: Int, continuation: CheckedContinuation<Bool, Never>)] = []
        var markReadsInFlight: [String: [String]] = [:]
        var unacknowledgedReads: Set<String> = []

        /// Marks the flushes seen so far as applied and returns their waiters.
        mutating func takeAppliedFlushes(_ connection: Int) -> [CheckedContinuation<Bool, Never>] {
            guard connection == currentConnection else { return [] }
            flushesApplied = flushesSeen
            let ready = flushWaiters.filter { $0.after < flushesApplied }
            flushWaiters.removeAll { $0.after < flushesApplied }
            return ready.map(\.continuation)
        }
    }

    init(_ base: any KecalekTransport, seed: UInt64) {
        self.base = base
        state = LockedState(State(rng: SplitMix64(seed: seed)))
    }

    /// Notifications the client never saw: held when their connection ended.
    var discarded: Int { state.withLock { locked in locked.discarded } }
    /// Delivers every held notification now, while the client is idle, and returns once the client has
    /// applied them; false when the connection ended first.
    ///
    /// `send` must put ``flushFrame`` on the connection (the server's `sendRaw`). The client's read loop asks
    /// for its next frame only after it applied the one before, so that request tells that the flush is
    /// applied: no polling, no clock.
    func deliverHeld(send: @Sendable () async -> Void) async -> Bool {
        let after = state.withLock { locked in locked.flushesSeen }
        await send()
        return await withCheckedContinuation { continuation in
            let done: Bool? = state.withLock { locked in
                if locked.flushesApplied > after { return true }
                if locked.connectionEnded { return false }
                locked.flushWaiters.append((after, continuation))
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
        state.withLock { locked in locked.unacknowledgedReads.union(locked.markReadsInFlight.values.joined()) }
    }

    /// Cuts the connection in front of the `ordinal`th response from now (1 for the next one).
    func cut(beforeResponse ordinal: Int) { state.withLock { locked in locked.cutCountdown = ordinal } }

    /// Forgets a cut that has not happened.
    func cancelCut() { state.withLock { locked in locked.cutCountdown = nil } }

    func connect() async throws -> KecalekChannel {
        let channel = try await base.connect()
        let (connection, abandoned): (Int, [CheckedContinuation<Bool, Never>]) = state.withLock { locked in
            locked.currentConnection += 1
            // The last connection's `mark_read`s can no longer be answered; kept in flight, one would be lost
            // when this connection's client reuses its request ID (each client counts from 1).
            locked.unacknowledgedReads.formUnion(locked.markReadsInFlight.values.joined())
            locked.markReadsInFlight = [:]
            locked.discarded += locked.held.count
            locked.held = []
            locked.cutCountdown = nil
            locked.connectionEnded = false
            locked.flushesApplied = locked.flushesSeen
            defer { locked.flushWaiters = [] }
            return (locked.currentConnection, locked.flushWaiters.map(\.continuation))
        }
        for waiter in abandoned { waiter.resume(returning: false) }
        let source = FrameSource(channel.inbound)
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
            let applied = state.withLock { locked in locked.takeAppliedFlushes(connection) }
            for waiter in applied { waiter.resume(returning: true) }
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

    private func endConnection(_ connection: Int) {
        let waiters: [CheckedContinuation<Bool, Never>] = state.withLock { locked in
            guard connection == locked.currentConnection else { return [] }
            locked.discarded += locked.held.count
            locked.held = []
            locked.connectionEnded = true
            defer { locked.flushWaiters = [] }
            return locked.flushWaiters.map(\.continuation)
        }
        for waiter in waiters { waiter.resume(returning: false) }
    }

    private func noteRequest(_ frame: Data) {
        guard frame.range(of: Self.markReadMarker) != nil, let request = try? KecalekRequest(frame: frame),
            request.type == "mark_read"
        else { return }
        let ids = (request.parameters["message_ids"]?.arrayValue ?? []).compactMap(\.stringValue)
        state.withLock { locked in locked.markReadsInFlight[request.requestID] = ids }
    }

    private func route(_ frame: Data, connection: Int) -> Routing {
        // A closed client's connection: it applies nothing any more, and nothing here is its business.
        guard state.withLock({ locked in connection == locked.currentConnection }) else { return .deliver([frame]) }
        if frame == Self.flushFrame {
            return state.withLock { locked in
                locked.flushesSeen += 1
                defer { locked.held = [] }
                return .deliver(locked.held)
            }
        }
        guard frame.range(of: Self.requestIDMarker) != nil else {
            state.withLock { locked in locked.held.append(frame) }
            return .deliver([])
        }
        // A response: parsed only while a `mark_read` waits for one (to learn whether it was accepted).
        let waiting = state.withLock { locked in !locked.markReadsInFlight.isEmpty }
        let response: KecalekResponse? =
            if waiting, case .response(let parsed)? = try? KecalekInbound(frame: frame) { parsed } else { nil }
        return state.withLock { locked in
            let marked = response.flatMap { locked.markReadsInFlight.removeValue(forKey: $0.requestID) }
            if let response, !response.isOK { locked.unacknowledgedReads.formUnion(marked ?? []) }
            if let countdown = locked.cutCountdown {
                locked.cutCountdown = countdown - 1
                if countdown <= 1 {
                    locked.cutCountdown = nil
                    locked.unacknowledgedReads.formUnion(marked ?? [])
                    return .cut
                }
            }
            let count = Int.random(in: 0...locked.held.count, using: &locked.rng)
            let released = Array(locked.held.prefix(count))
            locked.held.removeFirst(count)
            return .deliver(released + [frame])
        }
    }
}

/// The base connection's frames, pulled only when the client asks for one, and the frames ready for it.
private final class FrameSource: Sendable {
    // Only the client's read loop pulls, one frame at a time: no two calls overlap. An iterator is not
    // `Sendable`, so each pull makes a fresh one; every iterator of a stream reads the stream's one buffer,
    // so each continues where the last one stopped.
    private let inbound: AsyncThrowingStream<Data, any Error>
    private let ready = LockedState<[Data]>([])

    init(_ inbound: AsyncThrowingStream<Data, any Error>) { self.inbound = inbound }

    func next() async throws -> Data? {
        var iterator = inbound.makeAsyncIterator()
        return try await iterator.next()
    }

    func takeReady() -> Data? { ready.withLock { frames in frames.isEmpty ? nil : frames.removeFirst() } }

    func enqueue(_ frames: [Data]) { ready.withLock { ready in ready += frames } }
}
