import Foundation
import TidingsCore

/// A Socket.IO 5 client for one namespace, with acknowledgements, binary attachments, a bounded send
/// buffer and automatic reconnection.
///
/// Guarantees:
/// - Emits go out in call order. Emits made while disconnected wait in a bounded buffer and go out
///   exactly once, after the next successful connect; with a full buffer (or none) they fail at once
///   with ``SocketIOError/sendBufferFull`` (or ``SocketIOError/notConnected``).
/// - Events the server sends before it answers the connect are delivered right after ``Event/connect``,
///   in order, never dropped; more of them than ``Configuration/maximumBufferedEvents`` fail the attempt
///   with ``SocketIOError/tooManyEarlyEvents`` (the socket is read meanwhile, so waiting would not bound them).
/// - Every acknowledgement wait ends: with the server's arguments, ``SocketIOError/ackTimeout`` after
///   its timeout on the injected clock, ``SocketIOError/disconnected`` when the connection that carried
///   the emit drops, or ``SocketIOError/closed`` after ``disconnect()``.
/// - After a connection drops (not after a server-initiated or client disconnect) the client reconnects
///   on the schedule of its ``SocketIOReconnectPolicy``, announcing each attempt.
///
/// For example:
/// ```swift
/// let client = SocketIOClient(url: URL(string: "http://127.0.0.1:5000")!)
/// try await client.connect(auth: ["token": "…"])
/// let reply = try await client.emitWithAck("join", "lobby", timeout: .seconds(5))
/// for await event in client.events { if case .event(let name, let arguments, _) = event { … } }
/// ```
/// See https://socket.io/docs/v4/socket-io-protocol/.
public actor SocketIOClient {
    /// Behaviour settings.
    public struct Configuration: Sendable {
        /// Whether to reconnect after the connection drops.
        public var reconnects: Bool
        /// The reconnection schedule and attempt limit.
        public var reconnectPolicy: SocketIOReconnectPolicy
        /// How many emits may wait while disconnected; 0 makes emits fail at once when disconnected.
        public var sendBufferLimit: Int
        /// How long the server may take to answer the namespace connect.
        public var connectTimeout: Duration
        /// How many events may wait for the consumer of ``SocketIOClient/events``.
        ///
        /// Back-pressure: with this many waiting, the client stops taking messages from its Engine.IO
        /// session (which in turn stops reading its socket) until the app takes one, so a flooding
        /// server cannot fill memory. Heartbeats and acknowledgements wait too: an app must keep reading
        /// ``SocketIOClient/events``, and one that stops for longer than the server's ping interval plus
        /// timeout loses the connection (and reconnects).
        public var maximumBufferedEvents: Int
        /// The largest total size of the binary attachments one packet may announce and send, in bytes;
        /// a packet over it fails the connection (``SocketIOError/malformedPacket``) before it is
        /// buffered further.
        public var maximumAttachmentBytes: Int
        /// Whether the server speaks Socket.IO protocol 4 (socket.io 2.x, over Engine.IO 3): it connects
        /// the default namespace by itself, so the client sends no `CONNECT` for `/`, and it takes no
        /// auth payload.
        public var legacyProtocol: Bool

        /// The defaults of the JavaScript client, with a buffer of 1000 emits.
        public init(
            reconnects: Bool = true,
            reconnectPolicy: SocketIOReconnectPolicy = SocketIOReconnectPolicy(),
            sendBufferLimit: Int = 1_000,
            connectTimeout: Duration = .seconds(20),
            legacyProtocol: Bool = false,
            maximumBufferedEvents: Int = 1_024,
            maximumAttachmentBytes: Int = 64 * 1024 * 1024
        ) {
            self.maximumBufferedEvents = max(1, maximumBufferedEvents)
            self.maximumAttachmentBytes = max(0, maximumAttachmentBytes)
            self.reconnects = reconnects
            self.reconnectPolicy = reconnectPolicy
            self.sendBufferLimit = max(0, sendBufferLimit)
            self.connectTimeout = connectTimeout
            self.legacyProtocol = legacyProtocol
        }
    }

    /// Why the client disconnected.
    public enum DisconnectReason: Sendable, Hashable {
        /// The app called ``SocketIOClient/disconnect()``; no reconnection follows.
        case clientDisconnect
        /// The server sent a disconnect for the namespace; no reconnection follows.
        case serverDisconnect
        /// The connection closed or failed; the detail names the error. Reconnection follows.
        case transportError(String)
    }

    /// What happened, in order.
    public enum Event: Sendable {
        /// The namespace is connected (first time or after a reconnect).
        case connect
        /// The namespace is disconnected.
        case disconnect(DisconnectReason)
        /// Reconnection attempt `n` (from 1) is starting.
        case reconnectAttempt(Int)
        /// A connect or reconnect attempt failed; ``SocketIOError/reconnectFailed`` means no more
        /// attempts follow.
        case connectError(SocketIOError)
        /// The server emitted an event; answer through `ack` when the server asked for one.
        case event(name: String, arguments: [JSONValue], ack: SocketIOAcknowledgement?)
    }

    enum State: Equatable {
        case idle, connecting, connected, waitingToReconnect, disconnected
    }

    struct Outgoing {
        var bodies: [EngineIOPacket.Body]
        var ackID: Int?
    }

    /// Everything that happens to the client, in order; read it from one task.
    public nonisolated let events: AsyncStream<Event>

    private let connector: any EngineIOConnector
    private let configuration: Configuration
    private let clock: any Clock<Duration>
    private let random: @Sendable () -> Double
    /// Events on their way to the consumer of ``events``; full, it holds the session reader.
    private let eventQueue: BackPressureQueue<Event>

    private var state = State.idle
    private var namespace = "/"
    private var auth: JSONValue?
    private var generation = 0
    private var session: (any EngineIOSession)?
    private var readTask: Task<Void, Never>?
    private var reconnectTask: Task<Void, Never>?
    private var connectWaiter: CheckedContinuation<Void, any Error>?
    private var connectTimer: Task<Void, Never>?
    private var outbox: [Outgoing] = []
    private var earlyEvents: [SocketIOPacket] = []
    private var nextAckID = 0
    private var pendingAcks: [Int: CheckedContinuation<[JSONValue], any Error>] = [:]
    /// When each pending ack times out, as time elapsed on the clock since the client was made.
    private var ackDeadlines: [Int: (deadline: Duration, description: String)] = [:]
    /// One task sleeps until the earliest ack deadline (a timer task per emit costs a task and a
    /// wake-up per ack); `sweeperTarget` is the deadline it sleeps towards.
    private var ackSweeper: Task<Void, Never>?
    private var sweeperTarget: Duration?
    private let elapsed: @Sendable () -> Duration
    private var inFlightAcks: Set<Int> = []

    /// Whether the namespace is connected now.
    public var isConnected: Bool { state == .connected }

    /// The Engine.IO transport carrying the connection now, when it runs over an ``EngineIOClient``.
    public var activeTransport: EngineIOClient.ActiveTransport? {
        get async { await (session as? EngineIOClient)?.activeTransport }
    }

    /// Events waiting for the consumer of ``events`` now, and the most that ever waited.
    nonisolated var bufferedEvents: (count: Int, peak: Int) { (eventQueue.count, eventQueue.peakCount) }

    /// Messages waiting in the current Engine.IO session below this client, and the most that ever waited
    /// there (nil without a session, or under a connector other than Tidings' own).
    var sessionBufferedMessages: (count: Int, peak: Int)? { (session as? EngineIOClient)?.bufferedMessages }

    /// How many emits wait in the send buffer.
    public var bufferedEmitCount: Int { state == .connected ? 0 : outbox.count }

    /// A client that opens its Engine.IO sessions through `connector`.
    ///
    /// - Parameters:
    ///   - connector: opens Engine.IO sessions (``EngineIOClientConnector`` for a real server).
    ///   - configuration: reconnection and buffering.
    ///   - clock: the clock for every timeout and reconnection delay.
    ///   - random: numbers in `0..<1` for the reconnection jitter.
    public init(
        connector: any EngineIOConnector,
        configuration: Configuration = Configuration(),
        clock: any Clock<Duration> = ContinuousClock(),
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.connector = connector
        self.configuration = configuration
        self.clock = clock
        self.elapsed = Self.elapsedTime(on: clock)
        self.random = random
        eventQueue = BackPressureQueue(limit: configuration.maximumBufferedEvents)
        events = eventQueue.makeNonThrowingStream()
    }

    // MARK: - Connecting

    /// The first ack id from `candidate` on (wrapping after `Int32.max`) that `isTaken` does not
    /// claim: after a wrap, an id still waiting for its ack must not be handed out again, or one
    /// answer would resolve two emits.
    static func freeAckID(from candidate: Int, isTaken: (Int) -> Bool) -> Int {
        var id = candidate
        while isTaken(id) { id = id == Int(Int32.max) ? 0 : id + 1 }
        return id
    }

    /// Moves the ack counter (for tests of its wrap after `Int32.max`, which would otherwise take
    /// two billion emits).
    func setNextAckID(_ id: Int) { nextAckID = id }

    /// Connects to `namespace`, sending `auth` in the connect packet, and returns once the server
    /// accepted. The namespace and auth are reused by every reconnection.
    ///
    /// Does nothing when already connected or connecting.
    /// - Throws: ``SocketIOError/connectRefused`` (with the server's data) when the server refuses,
    ///   ``EngineIOError`` when the server can't be reached, ``SocketIOError/ackTimeout`` when the
    ///   server does not answer within the connect timeout, `CancellationError` when the calling task
    ///   is cancelled; no reconnection follows a failed first connect.
    public func connect(namespace: String = "/", auth: JSONValue? = nil) async throws {
        guard state == .idle || state == .disconnected else { return }
        self.namespace = namespace.hasPrefix("/") ? namespace : "/" + namespace
        self.auth = auth
        do {
            try await attemptConnect()
        } catch {
            if state == .connecting { state = .disconnected }
            throw error
        }
    }

    /// One connect attempt: a new Engine.IO session, the namespace connect, and its answer.
    private func attemptConnect() async throws {
        generation += 1
        let attempt = generation
        state = .connecting
        earlyEvents = []
        let session = try await connector.connect()
        guard attempt == generation, state == .connecting else {
            await session.close()
            throw SocketIOError(.closed, "the client was disconnected while connecting")
        }
        self.session = session
        readTask = Task { await self.read(session, generation: attempt) }
        if configuration.legacyProtocol {
            // socket.io 2.x connects "/" by itself and knows no auth payload.
            if namespace != "/" {
                try session.send([.text(SocketIOPacket(.connect, namespace: namespace).encoded().text)])
            }
        } else {
            let connect = SocketIOPacket(.connect, namespace: namespace, data: auth)
            try session.send([.text(connect.encoded().text)])
        }
        let timeout = configuration.connectTimeout
        let clock = self.clock
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                if state == .connected {
                    continuation.resume()
                    return
                }
                guard attempt == generation, state == .connecting, !Task.isCancelled else {
                    continuation.resume(
                        throwing: Task.isCancelled
                            ? CancellationError()
                            : SocketIOError(.disconnected, "the connection dropped while connecting"))
                    return
                }
                connectWaiter = continuation
                connectTimer = Task {
                    do { try await clock.sleep(for: timeout) } catch { return }
                    self.connectTimedOut(generation: attempt)
                }
            }
        } onCancel: {
            Task { await self.connectCancelled(generation: attempt) }
        }
    }

    /// The task waiting for the namespace connect was cancelled: give up this attempt.
    private func connectCancelled(generation attempt: Int) {
        guard attempt == generation, state == .connecting else { return }
        abandonConnect(CancellationError())
    }

    private func connectTimedOut(generation attempt: Int) {
        guard attempt == generation, state == .connecting else { return }
        abandonConnect(SocketIOError(.ackTimeout, "the server did not answer the connect in time"))
    }

    /// Gives up the attempt in progress: its waiter gets `error`, and whatever its session still delivers
    /// (a connect answer that comes too late, more events) is ignored, so the client can never become
    /// connected through an attempt its caller was told had failed.
    private func abandonConnect(_ error: any Error) {
        generation += 1
        earlyEvents = []
        resolveConnect(error)
        dropSession()
    }

    private func resolveConnect(_ error: (any Error)?) {
        connectTimer?.cancel()
        connectTimer = nil
        guard let waiter = connectWaiter else { return }
        connectWaiter = nil
        if let error { waiter.resume(throwing: error) } else { waiter.resume() }
    }

    private func dropSession() {
        readTask?.cancel()
        readTask = nil
        if let session {
            Task { await session.close() }
        }
        session = nil
    }

    // MARK: - Reading

    private func read(_ session: any EngineIOSession, generation attempt: Int) async {
        var assembler = SocketIOPacketAssembler(maximumAttachmentBytes: configuration.maximumAttachmentBytes)
        do {
            for try await body in session.messages {
                let packet: SocketIOPacket?
                switch body {
                case .text(let text): packet = try assembler.receive(text: text)
                case .binary(let bytes): packet = try assembler.receive(binary: bytes)
                }
                guard attempt == generation else { return }
                if let packet {
                    handle(packet)
                    // Back-pressure: while the app lags, stop taking messages from the session, which
                    // then stops reading its socket.
                    await eventQueue.waitForSpace()
                }
            }
            sessionEnded(EngineIOError(.closed, "the server closed the session"), generation: attempt)
        } catch {
            sessionEnded(error, generation: attempt)
        }
    }

    private func handle(_ packet: SocketIOPacket) {
        guard packet.namespace == namespace else { return }
        switch packet.kind {
        case .connect:
            guard state == .connecting else { return }
            state = .connected
            resolveConnect(nil)
            eventQueue.enqueue(.connect)
            let early = earlyEvents
            earlyEvents = []
            for event in early { deliver(event) }
            kickDrain()
        case .connectError:
            guard state == .connecting else { return }
            let message = packet.data?["message"]?.stringValue ?? packet.data?.stringValue ?? "refused"
            abandonConnect(SocketIOError(.connectRefused, message, data: packet.data?["data"] ?? packet.data))
        case .event, .binaryEvent:
            if state == .connected {
                deliver(packet)
            } else if earlyEvents.count < configuration.maximumBufferedEvents {
                earlyEvents.append(packet)
            } else {
                abandonConnect(
                    SocketIOError(
                        .tooManyEarlyEvents,
                        "more than \(configuration.maximumBufferedEvents) events before the connect answer"))
            }
        case .ack, .binaryAck:
            guard let id = packet.id else { return }
            resolveAck(id, with: .success(packet.arguments))
        case .disconnect:
            guard state == .connected else { return }
            lostConnection(.serverDisconnect)
        }
    }

    private func deliver(_ packet: SocketIOPacket) {
        guard let name = packet.eventName else { return }
        var responder: SocketIOAcknowledgement?
        if let id = packet.id {
            let attempt = generation
            responder = SocketIOAcknowledgement(id: id) { [weak self] arguments in
                await self?.sendAck(id: id, arguments: arguments, generation: attempt)
            }
        }
        eventQueue.enqueue(.event(name: name, arguments: packet.arguments, ack: responder))
    }

    private func sendAck(id: Int, arguments: [JSONValue], generation attempt: Int) {
        // An acknowledgement belongs to the connection that carried the event.
        guard attempt == generation, state == .connected else { return }
        let (text, attachments) = SocketIOPacket(.ack, namespace: namespace, id: id, data: .array(arguments))
            .encoded()
        outbox.append(Outgoing(bodies: [.text(text)] + attachments.map { .binary($0) }, ackID: nil))
        kickDrain()
    }

    private func sessionEnded(_ error: any Error, generation attempt: Int) {
        guard attempt == generation else { return }
        switch state {
        case .connecting:
            resolveConnect(error)
            dropSession()
        case .connected:
            lostConnection(.transportError("\(error)"))
        case .idle, .waitingToReconnect, .disconnected:
            break
        }
    }

    private func lostConnection(_ reason: DisconnectReason) {
        generation += 1
        dropSession()
        for id in inFlightAcks {
            resolveAck(id, with: .failure(SocketIOError(.disconnected, "the connection dropped before the ack")))
        }
        inFlightAcks = []
        eventQueue.enqueue(.disconnect(reason))
        if case .transportError = reason, configuration.reconnects {
            state = .waitingToReconnect
            reconnectTask = Task { await self.reconnect() }
        } else {
            state = .disconnected
            failOutbox(SocketIOError(.disconnected, "the namespace was disconnected: \(reason)"))
        }
    }

    // MARK: - Reconnecting

    private func reconnect() async {
        var attempt = 0
        while state == .waitingToReconnect {
            attempt += 1
            if let limit = configuration.reconnectPolicy.maximumAttempts, attempt > limit {
                state = .disconnected
                let error = SocketIOError(.reconnectFailed, "gave up after \(limit) attempts")
                eventQueue.enqueue(.connectError(error))
                failOutbox(error)
                return
            }
            let delay = configuration.reconnectPolicy.delay(forAttempt: attempt, random: random())
            do { try await clock.sleep(for: delay) } catch { return }
            guard state == .waitingToReconnect else { return }
            eventQueue.enqueue(.reconnectAttempt(attempt))
            do {
                try await attemptConnect()
                return
            } catch {
                guard state == .connecting || state == .waitingToReconnect else { return }
                state = .waitingToReconnect
                let socketError =
                    error as? SocketIOError ?? SocketIOError(.transportFailed, "\(error)")
                eventQueue.enqueue(.connectError(socketError))
                if socketError == .connectRefused {
                    state = .disconnected
                    failOutbox(socketError)
                    return
                }
            }
        }
    }

    // MARK: - Emitting

    /// Emits `event` with `arguments` (any JSON; `.binary` goes as an attachment).
    ///
    /// Returns once the emit is queued (connected) or buffered (disconnected), not once delivered.
    /// - Throws: ``SocketIOError/notConnected`` when disconnected with buffering off or after
    ///   ``disconnect()``, ``SocketIOError/sendBufferFull`` when the buffer is full.
    public func emit(_ event: String, _ arguments: JSONValue...) throws {
        try emit(event, arguments: arguments)
    }

    /// Emits `event` with an array of `arguments`; see ``emit(_:_:)``.
    public func emit(_ event: String, arguments: [JSONValue]) throws {
        try checkCanSend()
        enqueue(SocketIOPacket.event(event, arguments, namespace: namespace), ackID: nil)
    }

    /// Emits `event` and waits for the server's acknowledgement.
    ///
    /// The timeout runs on the injected clock from this call, including time spent in the send buffer.
    /// - Returns: the arguments the server acknowledged with.
    /// - Throws: ``SocketIOError/ackTimeout``, ``SocketIOError/disconnected`` when the connection that
    ///   carried the emit dropped, ``SocketIOError/closed`` after ``disconnect()``, the errors of
    ///   ``emit(_:_:)``, and `CancellationError`.
    public func emitWithAck(
        _ event: String, _ arguments: JSONValue..., timeout: Duration = .seconds(10)
    ) async throws -> [JSONValue] {
        try await emitWithAck(event, arguments: arguments, timeout: timeout)
    }

    /// Emits `event` with an array of `arguments` and waits for the acknowledgement; see
    /// ``emitWithAck(_:_:timeout:)``.
    public func emitWithAck(
        _ event: String, arguments: [JSONValue], timeout: Duration = .seconds(10)
    ) async throws -> [JSONValue] {
        try checkCanSend()
        let id = Self.freeAckID(from: nextAckID) { pendingAcks[$0] != nil || inFlightAcks.contains($0) }
        nextAckID = id == Int(Int32.max) ? 0 : id + 1
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[JSONValue], any Error>) in
                pendingAcks[id] = continuation
                scheduleAckTimeout(id, after: timeout, description: "no ack for '\(event)' in \(timeout)")
                enqueue(SocketIOPacket.event(event, arguments, namespace: namespace, id: id), ackID: id)
            }
        } onCancel: {
            Task { await self.resolveAck(id, with: .failure(CancellationError())) }
        }
    }

    private func checkCanSend() throws {
        switch state {
        case .connected:
            return
        case .idle, .disconnected:
            throw SocketIOError(.notConnected, "connect first")
        case .connecting, .waitingToReconnect:
            guard configuration.sendBufferLimit > 0 else {
                throw SocketIOError(.notConnected, "disconnected, and buffering is off")
            }
            guard outbox.count < configuration.sendBufferLimit else {
                throw SocketIOError(.sendBufferFull, "\(outbox.count) emits are already waiting")
            }
        }
    }

    private func enqueue(_ packet: SocketIOPacket, ackID: Int?) {
        let (text, attachments) = packet.encoded()
        outbox.append(Outgoing(bodies: [.text(text)] + attachments.map { .binary($0) }, ackID: ackID))
        kickDrain()
    }

    /// Hands the outbox to the session, in order, while connected. The session only queues, so this
    /// never waits.
    private func kickDrain() {
        guard state == .connected, let session, !outbox.isEmpty else { return }
        let batch = outbox
        outbox = []
        do {
            try session.send(batch.flatMap(\.bodies))
            for item in batch { if let id = item.ackID { inFlightAcks.insert(id) } }
        } catch {
            // Nothing of the batch went out: keep it, in order, for the next connection.
            outbox.insert(contentsOf: batch, at: 0)
        }
    }

    /// A function returning the time elapsed on `clock` since this call.
    private static func elapsedTime<C: Clock>(on clock: C) -> @Sendable () -> Duration where C.Duration == Duration {
        let start = clock.now
        return { start.duration(to: clock.now) }
    }

    private func scheduleAckTimeout(_ id: Int, after timeout: Duration, description: String) {
        let deadline = elapsed() + timeout
        ackDeadlines[id] = (deadline, description)
        if let target = sweeperTarget, target <= deadline { return }
        startSweeper(until: deadline)
    }

    private func startSweeper(until deadline: Duration) {
        ackSweeper?.cancel()
        sweeperTarget = deadline
        let clock = self.clock
        let wait = deadline - elapsed()
        ackSweeper = Task {
            do { try await clock.sleep(for: max(wait, .zero)) } catch { return }
            self.sweepAcks()
        }
    }

    /// Fails every ack whose deadline passed, then sleeps until the next deadline.
    private func sweepAcks() {
        ackSweeper = nil
        sweeperTarget = nil
        let now = elapsed()
        for (id, entry) in ackDeadlines where entry.deadline <= now {
            resolveAck(id, with: .failure(SocketIOError(.ackTimeout, entry.description)))
        }
        if let next = ackDeadlines.values.map(\.deadline).min() { startSweeper(until: next) }
    }

    private func resolveAck(_ id: Int, with result: Result<[JSONValue], any Error>) {
        ackDeadlines.removeValue(forKey: id)
        inFlightAcks.remove(id)
        guard let continuation = pendingAcks.removeValue(forKey: id) else { return }
        if case .failure = result {
            outbox.removeAll { $0.ackID == id }
        }
        continuation.resume(with: result)
    }

    private func failOutbox(_ error: SocketIOError) {
        let waiting = outbox
        outbox = []
        for item in waiting {
            if let id = item.ackID { resolveAck(id, with: .failure(error)) }
        }
    }

    // MARK: - Disconnecting

    /// Leaves the namespace and closes the connection; no reconnection follows.
    ///
    /// Buffered emits are dropped and every pending acknowledgement fails with
    /// ``SocketIOError/closed``. ``events`` receives `.disconnect(.clientDisconnect)` when the client
    /// was connected.
    public func disconnect() async {
        let wasConnected = state == .connected
        let session = self.session
        generation += 1
        state = .disconnected
        reconnectTask?.cancel()
        reconnectTask = nil
        resolveConnect(SocketIOError(.closed, "disconnected by the app"))
        readTask?.cancel()
        readTask = nil
        self.session = nil
        outbox = []
        for id in Array(pendingAcks.keys) {
            resolveAck(id, with: .failure(SocketIOError(.closed, "disconnected by the app")))
        }
        inFlightAcks = []
        ackSweeper?.cancel()
        ackSweeper = nil
        sweeperTarget = nil
        if let session {
            if wasConnected {
                let packet = SocketIOPacket(.disconnect, namespace: namespace).encoded().text
                try? session.send([.text(packet)])
            }
            await session.close()
        }
        if wasConnected { eventQueue.enqueue(.disconnect(.clientDisconnect)) }
    }
}

/// Answers one server event that asked for an acknowledgement.
///
/// Only the first answer is sent; an answer after the connection that carried the event dropped is
/// discarded, since the server no longer waits for it.
public struct SocketIOAcknowledgement: Sendable {
    /// The server's acknowledgement id.
    public let id: Int
    private let send: @Sendable ([JSONValue]) async -> Void
    private let answered = AnsweredFlag()

    init(id: Int, send: @escaping @Sendable ([JSONValue]) async -> Void) {
        self.id = id
        self.send = send
    }

    /// Sends the acknowledgement with `arguments`.
    ///
    /// - Returns: `false` when this acknowledgement was already answered.
    @discardableResult
    public func callAsFunction(_ arguments: JSONValue...) async -> Bool {
        await respond(arguments)
    }

    /// Sends the acknowledgement with an array of `arguments`.
    ///
    /// - Returns: `false` when this acknowledgement was already answered.
    @discardableResult
    public func respond(_ arguments: [JSONValue]) async -> Bool {
        guard answered.claim() else { return false }
        await send(arguments)
        return true
    }
}

/// A flag that can be claimed once, from any thread.
final class AnsweredFlag: Sendable {
    private struct State {
        var claimed = false
    }
    private let state = LockedState(State())

    func claim() -> Bool {
        state.withLock { locked in
            if locked.claimed { return false }
            locked.claimed = true
            return true
        }
    }
}
