import Foundation
import TidingsCore

/// The running state of one client WebSocket: the reader loop, the pinger and the close handshake.
///
/// `WebSocket` is a thin handle over it, so that releasing the handle can stop the loops (which
/// themselves keep this object alive while they run).
final class WebSocketConnection: Sendable {
    private enum Phase: Sendable { case open, closeSent, finished }

    private struct State: Sendable {
        var phase = Phase.open
        var closeStatus: (code: WebSocketCloseCode, reason: String)?
        var pongPending = false
        var tasks: [Task<Void, Never>] = []
        var closeWaiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiterID: UInt64 = 0
    }

    private let stream: any ByteStream
    private let configuration: WebSocket.Configuration
    /// Received messages on their way to the consumer; full, it holds the reader (back-pressure).
    private let incoming: BackPressureQueue<WebSocketMessage>
    private let logger: TidingsLogger
    private let state = LockedState(State())
    private let outbox = LockedState(Outbox())

    /// Frames queued for the transport, written in order by one writer task at a time.
    ///
    /// Senders append encoded frames and return; the writer hands everything queued so far to the
    /// transport in one write (one system call, one TLS record run), so a burst of small messages
    /// costs a few writes instead of one each.
    private struct Outbox: Sendable {
        var pending: [UInt8] = []
        var writerActive = false
        /// Senders waiting until the batch holding their frame is written.
        var waiters: [CheckedContinuation<Void, any Error>] = []
        /// Set once a write failed: nothing more can be sent.
        var failure: WebSocketError?
        var maskingKeys = MaskingKeyPool()
    }

    /// Above this many queued bytes a sender waits until its frame is written (back-pressure).
    static let outboxHighWaterMark = 64 * 1024

    init(
        stream: any ByteStream,
        configuration: WebSocket.Configuration,
        incoming: BackPressureQueue<WebSocketMessage>,
        logger: TidingsLogger
    ) {
        self.stream = stream
        self.configuration = configuration
        self.incoming = incoming
        self.logger = logger
    }

    var closeStatus: (code: WebSocketCloseCode, reason: String)? { state.withLock { $0.closeStatus } }

    /// Bytes queued and not yet handed to the transport, and whether a transport write is running
    /// (for tests of stuck writes).
    var outgoingState: (queuedBytes: Int, writing: Bool) {
        outbox.withLock { ($0.pending.count, $0.writerActive) }
    }

    /// Starts the reader (fed first with bytes that arrived with the handshake) and the pinger.
    func start(leftover: [UInt8]) {
        var tasks = [startReaderTask(for: stream) { await self.readLoop(leftover: leftover) }]
        if let interval = configuration.pingInterval {
            tasks.append(startPinger(interval: interval, clock: configuration.clock))
        }
        let finished = state.withLock { state -> Bool in
            state.tasks = tasks
            return state.phase == .finished
        }
        if finished { tasks.forEach { $0.cancel() } }
    }

    private func startPinger<C: Clock<Duration>>(interval: Duration, clock: C) -> Task<Void, Never> {
        // The first deadline is fixed now, not when the task first runs, so a virtual clock advanced
        // right after connecting still triggers the first ping.
        let first = clock.now.advanced(by: interval)
        return Task { await self.pingLoop(firstPing: first, interval: interval, clock: clock) }
    }

    // MARK: Reading

    private func readLoop(leftover: [UInt8]) async {
        var decoder = WebSocketFrameDecoder(role: .client, maximumFrameSize: configuration.maximumMessageSize)
        var assembler = WebSocketMessageAssembler(maximumMessageSize: configuration.maximumMessageSize)
        var incoming = leftover
        do {
            while true {
                if !incoming.isEmpty { decoder.append(incoming) }
                if try await handleFrames(decoder: &decoder, assembler: &assembler) { return }
                incoming = try await stream.read()
                if incoming.isEmpty {
                    finish(
                        WebSocketError(
                            .connectionLost, detail: "the server closed the connection without a close frame"))
                    return
                }
            }
        } catch let error as WebSocketError {
            logger.warning("closing after \(error.kind.name): \(error.detail)")
            if error != .connectionLost {
                // Tell the peer why, best effort; it may be gone already.
                if beginClose() { try? await write(.close(code: error.closeCode), waitUntilWritten: true) }
            }
            finish(error)
        } catch let error as TransportError {
            finish(WebSocketError(.connectionLost, detail: "the connection failed", underlying: error))
        } catch {
            finish(WebSocketError(.closed, detail: "the reader stopped"))
        }
    }

    /// Handles every whole frame the decoder holds; returns true when the connection is over.
    ///
    /// Messages completed by one read go to the consumer together (one wake-up, not one per message),
    /// always before a control frame that followed them is handled and before an error that followed
    /// them is thrown, so nothing that arrived before a failure is lost.
    private func handleFrames(
        decoder: inout WebSocketFrameDecoder, assembler: inout WebSocketMessageAssembler
    ) async throws -> Bool {
        var batch: [WebSocketMessage] = []
        do {
            while let frame = try decoder.nextFrame() {
                guard !frame.opcode.isControl else {
                    if !batch.isEmpty {
                        // Waits while the consumer lags: the socket is not read meanwhile.
                        await incoming.push(contentsOf: batch)
                        batch.removeAll(keepingCapacity: true)
                    }
                    if try await handle(frame, assembler: &assembler) { return true }
                    continue
                }
                if let message = try assembler.push(frame) { batch.append(message) }
            }
        } catch {
            if !batch.isEmpty { await incoming.push(contentsOf: batch) }
            throw error
        }
        if !batch.isEmpty { await incoming.push(contentsOf: batch) }
        return false
    }

    /// Handles one frame; returns true when the connection is over.
    private func handle(_ frame: WebSocketFrame, assembler: inout WebSocketMessageAssembler) async throws -> Bool {
        switch frame.opcode {
        case .ping:
            let open = state.withLock { $0.phase == .open }
            if open { try await write(WebSocketFrame(opcode: .pong, payload: frame.payload)) }
        case .pong:
            state.withLock { $0.pongPending = false }
        case .close:
            let status = try frame.closeStatus()
            state.withLock { $0.closeStatus = status }
            logger.info("server closed with code \(status.code.rawValue)")
            if beginClose() {
                // Echo the code (RFC 6455 §5.5.1); an empty close answers an empty one.
                let reply =
                    status.code == .noStatusReceived
                    ? WebSocketFrame(opcode: .close) : WebSocketFrame.close(code: status.code)
                try? await write(reply, waitUntilWritten: true)
            }
            finish(nil)
            return true
        case .text, .binary, .continuation:
            if let message = try assembler.push(frame) {
                // Waits while the consumer lags: the socket is not read meanwhile.
                await incoming.push(message)
            }
        }
        return false
    }

    // MARK: Pinging

    private func pingLoop<C: Clock<Duration>>(firstPing: C.Instant, interval: Duration, clock: C) async {
        var nextPing = firstPing
        var sequence: UInt64 = 0
        while true {
            do { try await clock.sleep(until: nextPing, tolerance: nil) } catch { return }
            sequence += 1
            let open = state.withLock { state -> Bool in
                guard state.phase == .open else { return false }
                state.pongPending = true
                return true
            }
            guard open else { return }
            let pongDeadline = nextPing.advanced(by: configuration.pongTimeout)
            let payload = (0..<8).map { UInt8(truncatingIfNeeded: sequence >> (56 - 8 * UInt64($0))) }
            // Queued without waiting even when the outbox is full: a ping stuck behind a write the
            // peer does not take must still count towards the pong deadline.
            do { try await write(WebSocketFrame(opcode: .ping, payload: payload), neverWait: true) } catch { return }
            do { try await clock.sleep(until: pongDeadline, tolerance: nil) } catch { return }
            let missed = state.withLock { $0.pongPending && $0.phase != .finished }
            if missed {
                logger.warning("no pong within \(configuration.pongTimeout); dropping the connection")
                finish(WebSocketError(.pongTimeout, detail: "no pong within \(configuration.pongTimeout)"))
                return
            }
            nextPing = nextPing.advanced(by: interval)
            if nextPing < pongDeadline { nextPing = pongDeadline }
        }
    }

    // MARK: Writing

    /// Queues `frame` behind every frame queued before it.
    ///
    /// Returns once the frame is queued, or once it is written when `waitUntilWritten` is set or the
    /// queue is over ``outboxHighWaterMark`` (unless `neverWait` is set). Throws `connectionLost` when an earlier write failed
    /// (or this one did, when waiting).
    private func write(_ frame: WebSocketFrame, waitUntilWritten: Bool = false, neverWait: Bool = false) async throws {
        let mustWait =
            !neverWait
            && (waitUntilWritten
                || outbox.withLock { $0.pending.count + frame.payload.count >= Self.outboxHighWaterMark })
        guard mustWait else {
            let (failure, startWriter) = outbox.withLock { box -> (WebSocketError?, Bool) in
                if let failure = box.failure { return (failure, false) }
                WebSocketFrameEncoder.encode(frame, maskingKey: box.maskingKeys.next(), into: &box.pending)
                defer { box.writerActive = true }
                return (nil, !box.writerActive)
            }
            if let failure { throw failure }
            if startWriter { Task { await self.drainOutbox() } }
            return
        }
        try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
            // The waiter joins the queue under the same lock as its bytes, so it is resumed by the
            // write that carries them.
            let (failure, startWriter) = outbox.withLock { box -> (WebSocketError?, Bool) in
                if let failure = box.failure { return (failure, false) }
                WebSocketFrameEncoder.encode(frame, maskingKey: box.maskingKeys.next(), into: &box.pending)
                box.waiters.append(waiter)
                defer { box.writerActive = true }
                return (nil, !box.writerActive)
            }
            if let failure { waiter.resume(throwing: failure) }
            if startWriter { Task { await self.drainOutbox() } }
        }
    }

    /// Writes queued frames, as many as are queued at a time, until the queue is empty.
    private func drainOutbox() async {
        while true {
            let batch = outbox.withLock { box -> ([UInt8], [CheckedContinuation<Void, any Error>])? in
                guard !box.pending.isEmpty else {
                    box.writerActive = false
                    return nil
                }
                defer {
                    box.pending = []
                    box.waiters = []
                }
                return (box.pending, box.waiters)
            }
            guard let (bytes, waiters) = batch else { return }
            do {
                try await stream.write(bytes)
                waiters.forEach { $0.resume() }
            } catch {
                let failure = WebSocketError(
                    .connectionLost, detail: "could not send", underlying: error as? TransportError)
                // Later frames would follow a gap: drop them and fail every sender from now on.
                let stranded = outbox.withLock { box -> [CheckedContinuation<Void, any Error>] in
                    box.failure = failure
                    box.pending = []
                    defer { box.waiters = [] }
                    return box.waiters
                }
                (waiters + stranded).forEach { $0.resume(throwing: failure) }
                return
            }
        }
    }

    func sendData(opcode: WebSocketOpcode, payload: [UInt8]) async throws {
        guard state.withLock({ $0.phase == .open }) else {
            throw WebSocketError(.closed, detail: "the connection is closing or closed")
        }
        try await write(WebSocketFrame(opcode: opcode, payload: payload))
    }

    func sendControl(_ frame: WebSocketFrame) async throws {
        guard state.withLock({ $0.phase == .open }) else {
            throw WebSocketError(.closed, detail: "the connection is closing or closed")
        }
        try await write(frame)
    }

    // MARK: Closing

    /// Moves from open to "close sent"; true when the caller should send the close frame.
    private func beginClose() -> Bool {
        state.withLock { state in
            guard state.phase == .open else { return false }
            state.phase = .closeSent
            return true
        }
    }

    func close(code: WebSocketCloseCode, reason: String) async {
        // One deadline for sending our close frame and receiving the server's: a peer that stopped
        // reading (full send buffer) must not hold `close()` any longer than one that stopped writing.
        // The timer ends the connection, which fails a stuck write and wakes the waits below.
        let timeout = configuration.closeTimeout
        let clock = configuration.clock
        let logger = self.logger
        let timer = Task {
            do { try await clock.sleep(for: timeout) } catch { return }
            logger.notice("the close handshake did not finish within \(timeout)")
            self.finish(nil)
        }
        defer { timer.cancel() }
        if beginClose() {
            let frame =
                code.isValidOnWire ? WebSocketFrame.close(code: code, reason: reason) : .close(code: .normalClosure)
            do { try await write(frame, waitUntilWritten: true) } catch {
                finish(nil)
                return
            }
        }
        await waitUntilFinished()
        finish(nil)
    }

    private func waitUntilFinished() async {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let done = state.withLock { state -> Bool in
                    if state.phase == .finished || Task.isCancelled { return true }
                    state.closeWaiters[id] = waiter
                    return false
                }
                if done { waiter.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.closeWaiters.removeValue(forKey: id) }
            waiter?.resume()
        }
    }

    /// Drops the connection without a close handshake (the handle was released).
    func abort(_ error: WebSocketError) {
        finish(error)
    }

    /// Ends the connection once: the message stream finishes (with `error`, or normally), the loops
    /// stop, the transport closes and `close()` callers wake.
    private func finish(_ error: WebSocketError?) {
        let ending = state.withLock { state -> ([Task<Void, Never>], [CheckedContinuation<Void, Never>])? in
            guard state.phase != .finished else { return nil }
            state.phase = .finished
            defer {
                state.tasks = []
                state.closeWaiters = [:]
            }
            return (state.tasks, Array(state.closeWaiters.values))
        }
        guard let (tasks, waiters) = ending else { return }
        incoming.finish(throwing: error)
        tasks.forEach { $0.cancel() }
        stream.close()
        waiters.forEach { $0.resume() }
    }
}
