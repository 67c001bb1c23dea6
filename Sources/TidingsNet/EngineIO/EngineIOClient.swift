import Foundation
import TidingsCore

/// An Engine.IO client session over HTTP long-polling, upgraded to WebSocket, or WebSocket only.
///
/// Guarantees: messages go out in the order ``send(_:)`` was called, across the upgrade; a polling POST
/// carries at most ``EngineIOPayload/maximumPacketsPerPost`` packets and no more than the server's
/// `maxPayload` bytes (unless one packet alone is larger); the session fails with
/// ``EngineIOError/heartbeatTimeout`` when the server's pings stop for `pingInterval + pingTimeout`
/// (Engine.IO 4) or its pongs stop for `pingTimeout` (Engine.IO 3). All waiting uses the injected clock.
///
/// For example:
/// ```swift
/// let session = try await EngineIOClient.connect(
///     configuration: .init(url: URL(string: "http://127.0.0.1:5000")!), clock: ContinuousClock())
/// try await session.send([.text("40")])
/// for try await message in session.messages { print(message) }
/// ```
/// See https://github.com/socketio/engine.io-protocol.
public actor EngineIOClient: EngineIOSession {
    /// How the client reaches the server.
    public enum Transports: Sendable, Hashable {
        /// HTTP long-polling only.
        case polling
        /// Long-polling first, then an upgrade to WebSocket when the server offers it.
        case pollingThenWebSocket
        /// WebSocket from the start.
        case webSocket
    }

    /// The transport currently carrying the session.
    public enum ActiveTransport: Sendable, Hashable {
        /// HTTP long-polling.
        case polling
        /// WebSocket.
        case webSocket
    }

    /// Where and how to connect.
    public struct Configuration: Sendable {
        /// The server's base URL (`http`/`https`); the scheme is switched to `ws`/`wss` for WebSocket.
        public var url: URL
        /// The Engine.IO path, `/socket.io/` by default.
        public var path: String
        /// Which transports to use.
        public var transports: Transports
        /// The protocol revision.
        public var version: EngineIOVersion
        /// Extra request headers (authorization, cookies); never put secrets in ``query``.
        public var headers: [String: String]
        /// Extra query parameters.
        public var query: [String: String]
        /// How long the handshake (connecting included) and the upgrade probe may take; a server
        /// that does not answer in time fails the handshake with ``EngineIOError/timedOut``.
        public var timeout: Duration
        /// How many received messages may wait for the consumer of ``EngineIOClient/messages``.
        ///
        /// Back-pressure: with this many waiting, the client stops polling (or reading its WebSocket)
        /// until the consumer takes one, so a fast server cannot fill memory. Pings wait too: a consumer
        /// stalled longer than the server's `pingInterval + pingTimeout` loses the session with
        /// ``EngineIOError/heartbeatTimeout``.
        public var maximumBufferedMessages: Int
        /// The most packets one polling response may hold; a larger body fails the session with
        /// ``EngineIOError/tooManyPackets`` instead of expanding into millions of packets.
        public var maximumPacketsPerPoll: Int

        /// A configuration with the defaults of the JavaScript client.
        public init(
            url: URL,
            path: String = "/socket.io/",
            transports: Transports = .pollingThenWebSocket,
            version: EngineIOVersion = .v4,
            headers: [String: String] = [:],
            query: [String: String] = [:],
            timeout: Duration = .seconds(20),
            maximumPacketsPerPoll: Int = 10_000,
            maximumBufferedMessages: Int = 1_024
        ) {
            self.maximumBufferedMessages = max(1, maximumBufferedMessages)
            self.maximumPacketsPerPoll = max(1, maximumPacketsPerPoll)
            self.url = url
            self.path = path
            self.transports = transports
            self.version = version
            self.headers = headers
            self.query = query
            self.timeout = timeout
        }
    }

    /// The handshake's session parameters.
    public nonisolated let handshake: EngineIOHandshake
    /// The `message` packets the server sends, in order.
    public nonisolated let messages: AsyncThrowingStream<EngineIOPacket.Body, any Error>

    private let configuration: Configuration
    private let clock: any Clock<Duration>
    private let http: any EngineIOPollingHTTP
    private let webSocketFactory: any EngineIOWebSocketFactory
    /// Received messages on their way to the consumer; full, it holds the readers (back-pressure).
    private let incoming: BackPressureQueue<EngineIOPacket.Body>

    private var webSocket: (any EngineIOWebSocket)?
    /// Packets waiting to go out; filled from any thread by the nonisolated ``send(_:)``.
    private let outbox = EngineIOOutbox()
    private let wakeups: AsyncStream<Void>
    private let wakeWriter: AsyncStream<Void>.Continuation
    private var writerTask: Task<Void, Never>?
    private var isWriting = false
    private var idleWaiters: [CheckedContinuation<Void, Never>] = []
    private var writesPaused = false
    private var isClosed = false
    private var stopPolling = false
    private var pollTask: Task<Void, Never>?
    private var readTask: Task<Void, Never>?
    private var heartbeatTask: Task<Void, Never>?
    private var upgradeTask: Task<Void, Never>?
    private var pongReceived = false

    /// The polling endpoint of this session, built once.
    private let pollingURL: URL

    /// Received messages waiting for the consumer of ``messages`` now, and the most that ever waited.
    nonisolated var bufferedMessages: (count: Int, peak: Int) { (incoming.count, incoming.peakCount) }

    /// The transport carrying the session now.
    public var activeTransport: ActiveTransport { webSocket == nil ? .polling : .webSocket }

    private init(
        configuration: Configuration,
        clock: any Clock<Duration>,
        http: any EngineIOPollingHTTP,
        webSocketFactory: any EngineIOWebSocketFactory,
        handshake: EngineIOHandshake
    ) {
        self.configuration = configuration
        self.clock = clock
        self.http = http
        self.webSocketFactory = webSocketFactory
        self.handshake = handshake
        self.pollingURL = Self.endpoint(configuration, transport: "polling", sid: handshake.sid)
        incoming = BackPressureQueue(limit: configuration.maximumBufferedMessages)
        messages = incoming.makeStream()
        (wakeups, wakeWriter) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Opens a session: the handshake over the first transport, then (in the background) the upgrade.
    ///
    /// - Parameters:
    ///   - configuration: where and how to connect.
    ///   - clock: the clock for timeouts and heartbeats.
    ///   - http: the polling transport.
    ///   - webSocketFactory: the WebSocket transport.
    /// - Throws: ``EngineIOError/handshakeFailed`` when the first packet is not a valid `open`,
    ///   ``EngineIOError/transportFailed`` or ``EngineIOError/httpStatus`` when the server can't be
    ///   reached, and `CancellationError`.
    public static func connect(
        configuration: Configuration,
        clock: any Clock<Duration>,
        http: any EngineIOPollingHTTP,
        webSocketFactory: any EngineIOWebSocketFactory
    ) async throws -> EngineIOClient {
        do {
            return try await handshake(
                configuration: configuration, clock: clock, http: http, webSocketFactory: webSocketFactory)
        } catch _ where Task.isCancelled {
            throw CancellationError()
        }
    }

    /// The handshake over the first transport, bounded as a whole by the configured timeout.
    private static func handshake(
        configuration: Configuration,
        clock: any Clock<Duration>,
        http: any EngineIOPollingHTTP,
        webSocketFactory: any EngineIOWebSocketFactory
    ) async throws -> EngineIOClient {
        let timedOut: @Sendable () -> any Error = {
            EngineIOError(.timedOut, "no handshake within \(configuration.timeout)")
        }
        switch configuration.transports {
        case .polling, .pollingThenWebSocket:
            let url = endpoint(configuration, transport: "polling", sid: nil)
            let body = try await withTimeout(configuration.timeout, clock: clock, timeoutError: timedOut) {
                try await http.get(url, headers: configuration.headers)
            }
            let packets = try EngineIOPayload.decode(
                body, version: configuration.version, maximumPackets: configuration.maximumPacketsPerPoll)
            guard let open = packets.first, open.kind == .open else {
                throw EngineIOError(.handshakeFailed, "the first polling response is not an open packet")
            }
            let handshake = try EngineIOHandshake(json: open.text)
            let client = EngineIOClient(
                configuration: configuration, clock: clock, http: http, webSocketFactory: webSocketFactory,
                handshake: handshake)
            await client.startPolling(leftovers: Array(packets.dropFirst()))
            return client
        case .webSocket:
            let opened = try await withTimeout(configuration.timeout, clock: clock, timeoutError: timedOut) {
                try await openWebSocket(configuration: configuration, factory: webSocketFactory)
            }
            let client = EngineIOClient(
                configuration: configuration, clock: clock, http: http, webSocketFactory: webSocketFactory,
                handshake: opened.handshake)
            await client.startWebSocket(opened.socket, iterator: opened.frames.iterator)
            return client
        }
    }

    /// A WebSocket whose first message, the `open` packet, was read.
    private struct OpenedWebSocket: Sendable {
        var socket: any EngineIOWebSocket
        var frames: FrameIteratorBox
        var handshake: EngineIOHandshake
    }

    /// Connects and reads the `open` packet; on any failure (cancellation by the timeout included)
    /// the socket is released in the background, so a silent server cannot delay the error.
    private static func openWebSocket(
        configuration: Configuration, factory: any EngineIOWebSocketFactory
    ) async throws -> OpenedWebSocket {
        let url = endpoint(configuration, transport: "websocket", sid: nil)
        let socket = try await factory.connect(to: url, headers: configuration.headers)
        let frames = FrameIteratorBox(socket.frames.makeAsyncIterator())
        do {
            let first: EngineIOFrame?
            do {
                first = try await frames.iterator.next()
            } catch {
                throw EngineIOError(.handshakeFailed, "the WebSocket failed before the open packet: \(error)")
            }
            try Task.checkCancellation()
            guard let first, let open = try? EngineIOPacket.decode(first, version: configuration.version),
                open.kind == .open
            else {
                throw EngineIOError(.handshakeFailed, "the first WebSocket message is not an open packet")
            }
            return OpenedWebSocket(socket: socket, frames: frames, handshake: try EngineIOHandshake(json: open.text))
        } catch {
            Task { await socket.close() }
            throw error
        }
    }

    static func endpoint(_ configuration: Configuration, transport: String, sid: String?) -> URL {
        var components = URLComponents(url: configuration.url, resolvingAgainstBaseURL: false) ?? URLComponents()
        if transport == "websocket" {
            components.scheme = components.scheme == "https" ? "wss" : "ws"
        }
        components.path = configuration.path
        var items = configuration.query.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
        items.append(URLQueryItem(name: "EIO", value: String(configuration.version.rawValue)))
        items.append(URLQueryItem(name: "transport", value: transport))
        if configuration.version == .v3 && transport == "polling" {
            // Ask for the text framing that this client speaks.
            items.append(URLQueryItem(name: "b64", value: "1"))
        }
        if let sid { items.append(URLQueryItem(name: "sid", value: sid)) }
        components.queryItems = items
        return components.url ?? configuration.url
    }

    // MARK: - Sending

    /// Queues `messages` to go out together and in order; callable from any thread without waiting.
    ///
    /// - Throws: ``EngineIOError/closed`` when the session is closed.
    public nonisolated func send(_ messages: [EngineIOPacket.Body]) throws {
        try outbox.append(messages.map { EngineIOPacket(.message, $0) })
        wakeWriter.yield()
    }

    nonisolated func enqueue(_ packet: EngineIOPacket) {
        guard (try? outbox.append([packet])) != nil else { return }
        wakeWriter.yield()
    }

    /// The one writer: takes what is queued (a bounded batch per POST over polling, everything over
    /// WebSocket) and writes it, one write at a time, until the session ends.
    private func writerLoop() async {
        for await _ in wakeups {
            while !isClosed, !writesPaused {
                let batch: [EngineIOPacket]
                if webSocket != nil {
                    batch = outbox.takeAll()
                } else {
                    batch = outbox.takeBatch(
                        maximumCount: EngineIOPayload.maximumPacketsPerPost, maximumBytes: handshake.maxPayload ?? .max)
                }
                if batch.isEmpty { break }
                isWriting = true
                do {
                    try await write(batch)
                } catch {
                    isWriting = false
                    resumeIdleWaiters()
                    fail(error)
                    return
                }
                isWriting = false
            }
            resumeIdleWaiters()
        }
    }

    private func write(_ batch: [EngineIOPacket]) async throws {
        if let socket = webSocket {
            for packet in batch { try await socket.send(packet.frame(version: configuration.version)) }
        } else {
            let body = EngineIOPayload.encode(batch, version: configuration.version)
            _ = try await http.post(pollingURL, body: body, headers: configuration.headers)
        }
    }

    /// Waits until no write is running (the upgrade needs the last POST finished).
    private func waitForWriterIdle() async {
        guard isWriting else { return }
        await withCheckedContinuation { idleWaiters.append($0) }
    }

    private func resumeIdleWaiters() {
        let waiters = idleWaiters
        idleWaiters = []
        for waiter in waiters { waiter.resume() }
    }

    // MARK: - Receiving

    /// Handles a control packet (messages go straight to ``messages`` from the readers).
    private func handle(_ packet: EngineIOPacket) {
        guard !isClosed else { return }
        switch packet.kind {
        case .message:
            // Only leftovers of the handshake response come this way; the readers push with waiting.
            incoming.enqueue(packet.body)
        case .ping:
            enqueue(EngineIOPacket(.pong, packet.body))
            if configuration.version == .v4 { armHeartbeat() }
        case .pong:
            pongReceived = true
        case .close:
            finish(nil)
        case .open, .upgrade, .noop:
            break
        }
    }

    private func startPolling(leftovers: [EngineIOPacket]) {
        armHeartbeat()
        writerTask = Task { await self.writerLoop() }
        for packet in leftovers { handle(packet) }
        startPollLoop()
        if configuration.transports == .pollingThenWebSocket, handshake.upgrades.contains("websocket") {
            upgradeTask = Task { await self.upgrade() }
        }
    }

    private func startPollLoop() {
        let http = self.http
        let url = pollingURL
        let headers = configuration.headers
        let version = configuration.version
        let maximumPackets = configuration.maximumPacketsPerPoll
        let incoming = self.incoming
        // Runs off the actor: messages go straight to the stream; only control packets hop over.
        pollTask = Task.detached {
            while await self.shouldKeepPolling() {
                do {
                    let body = try await http.get(url, headers: headers)
                    for packet in try EngineIOPayload.decode(body, version: version, maximumPackets: maximumPackets) {
                        if packet.kind == .message {
                            await incoming.push(packet.body)
                        } else {
                            await self.handle(packet)
                        }
                    }
                } catch {
                    await self.pollFailed(error)
                    return
                }
            }
        }
    }

    private func shouldKeepPolling() -> Bool { !isClosed && !stopPolling }

    private func pollFailed(_ error: any Error) {
        if !stopPolling { fail(error) }
    }

    private func startWebSocket(
        _ socket: any EngineIOWebSocket,
        iterator: AsyncThrowingStream<EngineIOFrame, any Error>.AsyncIterator
    ) {
        var iterator = iterator
        writerTask = Task { await self.writerLoop() }
        startWebSocket(socket, iterator: &iterator, armingHeartbeat: true)
    }

    private func startWebSocket(
        _ socket: any EngineIOWebSocket,
        iterator handedOver: inout AsyncThrowingStream<EngineIOFrame, any Error>.AsyncIterator,
        armingHeartbeat: Bool
    ) {
        webSocket = socket
        if armingHeartbeat { armHeartbeat() }
        let version = configuration.version
        let incoming = self.incoming
        // The iterator isn't Sendable; it is handed over once and only this task uses it from now on.
        nonisolated(unsafe) var iterator = handedOver
        // Runs off the actor: messages go straight to the stream; only control packets hop over.
        readTask = Task.detached {
            do {
                while let frame = try await iterator.next() {
                    let packet: EngineIOPacket
                    do {
                        packet = try EngineIOPacket.decode(frame, version: version)
                    } catch {
                        await self.fail(error)
                        return
                    }
                    if packet.kind == .message {
                        await incoming.push(packet.body)
                    } else {
                        await self.handle(packet)
                    }
                }
                await self.fail(EngineIOError(.transportFailed, "the WebSocket closed"))
            } catch {
                await self.fail(EngineIOError(.transportFailed, "the WebSocket failed: \(error)"))
            }
        }
        wakeWriter.yield()
    }

    // MARK: - Upgrade

    private func upgrade() async {
        let url = Self.endpoint(configuration, transport: "websocket", sid: handshake.sid)
        var socket: (any EngineIOWebSocket)?
        do {
            let opened = try await webSocketFactory.connect(to: url, headers: configuration.headers)
            socket = opened
            guard !isClosed else { throw EngineIOError(.closed) }
            var iterator = try await probe(opened)
            // Stop polling: the server releases the pending GET with a noop once it saw the probe.
            stopPolling = true
            writesPaused = true
            await pollTask?.value
            await waitForWriterIdle()
            guard !isClosed else { throw EngineIOError(.closed) }
            try await opened.send(EngineIOPacket(.upgrade).frame(version: configuration.version))
            writesPaused = false
            startWebSocket(opened, iterator: &iterator, armingHeartbeat: false)
        } catch {
            await socket?.close()
            guard !isClosed else { return }
            // Keep polling: an upgrade failure is not a session failure.
            writesPaused = false
            if stopPolling {
                stopPolling = false
                startPollLoop()
            }
            wakeWriter.yield()
        }
    }

    /// Sends `2probe` and reads until `3probe`; a timer on the injected clock closes the socket when
    /// the answer takes longer than the configured timeout. Returns the iterator to keep reading with.
    private func probe(
        _ socket: any EngineIOWebSocket
    ) async throws -> AsyncThrowingStream<EngineIOFrame, any Error>.AsyncIterator {
        let version = configuration.version
        let timeout = configuration.timeout
        let clock = self.clock
        let timer = Task {
            try await clock.sleep(for: timeout)
            await socket.close()
        }
        defer { timer.cancel() }
        var iterator = socket.frames.makeAsyncIterator()
        try await socket.send(EngineIOPacket(.ping, .text("probe")).frame(version: version))
        while let frame = try await iterator.next() {
            if let packet = try? EngineIOPacket.decode(frame, version: version), packet.kind == .pong,
                packet.text == "probe"
            {
                return iterator
            }
        }
        throw EngineIOError(.upgradeFailed, "no answer to the upgrade probe")
    }

    // MARK: - Heartbeat

    private func armHeartbeat() {
        heartbeatTask?.cancel()
        let clock = self.clock
        let interval = handshake.pingInterval
        let timeout = handshake.pingTimeout
        switch configuration.version {
        case .v4:
            heartbeatTask = Task {
                do {
                    try await clock.sleep(for: interval + timeout)
                } catch {
                    return
                }
                self.fail(EngineIOError(.heartbeatTimeout, "no ping for \(interval + timeout)"))
            }
        case .v3:
            heartbeatTask = Task {
                while true {
                    do {
                        try await clock.sleep(for: interval)
                        self.sendV3Ping()
                        try await clock.sleep(for: timeout)
                    } catch {
                        return
                    }
                    if !self.pongReceived {
                        self.fail(EngineIOError(.heartbeatTimeout, "no pong within \(timeout)"))
                        return
                    }
                }
            }
        }
    }

    private func sendV3Ping() {
        pongReceived = false
        enqueue(EngineIOPacket(.ping))
    }

    // MARK: - Closing

    /// Closes the session: sends a `close` packet (best effort), stops every task, finishes ``messages``.
    ///
    /// Messages queued before the call go out first, as long as they are written within the
    /// configured timeout; after it the session ends without them.
    public func close() async {
        guard !isClosed else { return }
        enqueue(EngineIOPacket(.close))
        // A write stuck on a peer that stopped reading must not hold `close()`: after the configured
        // timeout the session ends anyway (which also releases the stuck transport).
        let timeout = configuration.timeout
        let clock = self.clock
        let timer = Task {
            do { try await clock.sleep(for: timeout) } catch { return }
            self.finish(nil)
        }
        defer { timer.cancel() }
        // The writer resumes idle waiters each time it runs dry (or fails).
        while !isClosed, !outbox.isEmpty || isWriting {
            await withCheckedContinuation { idleWaiters.append($0) }
        }
        finish(nil)
    }

    private func fail(_ error: any Error) {
        finish(error)
    }

    private func finish(_ error: (any Error)?) {
        guard !isClosed else { return }
        isClosed = true
        heartbeatTask?.cancel()
        pollTask?.cancel()
        readTask?.cancel()
        upgradeTask?.cancel()
        writerTask?.cancel()
        wakeWriter.finish()
        outbox.close()
        resumeIdleWaiters()
        if let socket = webSocket {
            Task { await socket.close() }
        }
        incoming.finish(throwing: error)
    }
}

/// Holds the frame iterator of a WebSocket while it passes from the handshake to the reader task.
///
/// Only one task uses it at a time: the handshake, then (after it returned) the reader.
final class FrameIteratorBox: @unchecked Sendable {
    var iterator: AsyncThrowingStream<EngineIOFrame, any Error>.AsyncIterator

    init(_ iterator: AsyncThrowingStream<EngineIOFrame, any Error>.AsyncIterator) {
        self.iterator = iterator
    }
}

/// The packets waiting to go out, shared by the nonisolated ``EngineIOClient/send(_:)`` and the
/// writer; a lock keeps appends from any thread in order.
final class EngineIOOutbox: Sendable {
    private struct State {
        var packets: [EngineIOPacket] = []
        var head = 0
        var closed = false
    }
    private let state = LockedState(State())

    var isEmpty: Bool { state.withLock { locked in locked.head == locked.packets.count } }

    func append(_ new: [EngineIOPacket]) throws {
        try state.withLock { locked in
            guard !locked.closed else { throw EngineIOError(.closed, "the session is closed") }
            locked.packets.append(contentsOf: new)
        }
    }

    func close() {
        state.withLock { locked in
            locked.closed = true
            locked.packets = []
            locked.head = 0
        }
    }

    func takeAll() -> [EngineIOPacket] {
        state.withLock { locked in
            let batch = Array(locked.packets[locked.head...])
            locked.packets.removeAll(keepingCapacity: true)
            locked.head = 0
            return batch
        }
    }

    /// Takes at most `maximumCount` packets whose polling encoding stays within `maximumBytes`
    /// (at least one packet, even a larger one, so nothing is stuck).
    func takeBatch(maximumCount: Int, maximumBytes: Int) -> [EngineIOPacket] {
        state.withLock { locked in
            var batch: [EngineIOPacket] = []
            var size = 0
            while locked.head < locked.packets.count, batch.count < maximumCount {
                let packet = locked.packets[locked.head]
                let packetSize: Int
                switch packet.body {
                case .text(let text): packetSize = text.utf8.count + 2
                case .binary(let bytes): packetSize = (bytes.count + 2) / 3 * 4 + 2
                }
                if !batch.isEmpty, size + packetSize > maximumBytes { break }
                batch.append(packet)
                size += packetSize
                locked.head += 1
            }
            if locked.head == locked.packets.count {
                locked.packets.removeAll(keepingCapacity: true)
                locked.head = 0
            }
            return batch
        }
    }
}
