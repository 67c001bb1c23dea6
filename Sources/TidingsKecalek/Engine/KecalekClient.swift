import Foundation
import TidingsCore

/// The Kecalek engine: owns the connection, the message cache and the clock, syncs conversations
/// incrementally and applies server notifications.
///
/// Guarantees:
/// - Every request carries a fresh `request_id`; its response is matched by that ID within
///   ``Configuration/requestTimeout`` on the injected clock, or the request fails with
///   ``KecalekError/timeout``.
/// - A request made while disconnected waits up to ``Configuration/reconnectWait`` for the
///   reconnect, then fails with ``KecalekError/notConnected``.
/// - Each fetched page is written to the cache in one transaction, together with the deletions
///   learned in the same sync: the cache is never half-written.
/// - After a reconnect, every conversation opened with offset 0 is refreshed incrementally and a
///   ``KecalekChange/refreshed(conversationID:newMessageIDs:deletedMessageIDs:)`` is emitted.
///
/// For example:
///
/// ```swift
/// let client = KecalekClient(
///     configuration: .init(userID: "alice"), transport: transport, cache: cache,
///     decryptor: KecalekAESGCMCipher(keys: keys), clock: ContinuousClock())
/// try await client.connect()
/// let page = await client.messages(conversation: "general")
/// ```
public actor KecalekClient {
    /// Settings that do not change while the client runs.
    public struct Configuration: Sendable {
        /// The signed-in user; `mark_read` skips their own messages.
        public var userID: String
        /// How long a request waits for its response.
        public var requestTimeout: Duration
        /// How long a request made while disconnected waits for the reconnect; zero fails at once.
        public var reconnectWait: Duration
        /// Whether a lost connection is reopened automatically.
        public var reconnects: Bool
        /// The delay before the first reconnect attempt; doubled per failure up to ``maximumReconnectDelay``.
        public var initialReconnectDelay: Duration
        /// The longest delay between reconnect attempts.
        public var maximumReconnectDelay: Duration
        /// The most `get_messages` pages one incremental sync asks for before answering.
        public var maximumIncrementalPages: Int
        /// How many conversations (the most recently opened) a reconnect refreshes; older ones are
        /// refreshed when opened again, not on every reconnect forever.
        public var maximumOpenConversations: Int

        /// Creates a configuration with the defaults (10 s timeout, 10 s reconnect wait, 1–30 s backoff, 20
        /// pages, 16 open conversations).
        public init(
            userID: String, requestTimeout: Duration = .seconds(10), reconnectWait: Duration = .seconds(10),
            reconnects: Bool = true, initialReconnectDelay: Duration = .seconds(1),
            maximumReconnectDelay: Duration = .seconds(30), maximumIncrementalPages: Int = 20,
            maximumOpenConversations: Int = 16
        ) {
            self.maximumOpenConversations = maximumOpenConversations
            self.userID = userID
            self.requestTimeout = requestTimeout
            self.reconnectWait = reconnectWait
            self.reconnects = reconnects
            self.initialReconnectDelay = initialReconnectDelay
            self.maximumReconnectDelay = maximumReconnectDelay
            self.maximumIncrementalPages = maximumIncrementalPages
        }

        /// The wait before reconnect attempt `failures + 1`: doubling from the initial delay, capped.
        public func reconnectDelay(afterFailures failures: Int) -> Duration {
            var delay = max(initialReconnectDelay, .zero)
            for _ in 0..<min(failures, 16) where delay < maximumReconnectDelay {
                // Capped before doubling: `.seconds(.max)` as "no cap" must not overflow Duration.
                delay = delay > maximumReconnectDelay / 2 ? maximumReconnectDelay : delay * 2
            }
            return min(delay, maximumReconnectDelay)
        }
    }

    /// The configuration.
    public nonisolated let configuration: Configuration
    /// Changes for apps to render, in the order the client made them. Finishes on ``close()``.
    public nonisolated let changes: AsyncStream<KecalekChange>

    let transport: any KecalekTransport
    let cache: any KecalekMessageCache
    let decryptor: any KecalekMessageDecryptor
    let clock: any Clock<Duration>
    let log: TidingsLogger
    let changeContinuation: AsyncStream<KecalekChange>.Continuation
    /// The cache's executor, or a queue of the client's own: the cache is called synchronously, and SQLite
    /// may wait (busy timeout, a large write), which must never happen on a thread of the cooperative pool.
    private nonisolated let executor: SQLiteExecutor

    /// Runs the client's jobs on its cache's executor (`KecalekMessageCache.executor`), or on a queue of its
    /// own when the cache has none.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// The connection state.
    public private(set) var connectionState: KecalekConnectionState = .disconnected
    /// All bytes sent since the client was created (JSON text of every frame).
    public private(set) var totalBytesSent = 0
    /// All bytes received since the client was created, notifications included.
    public private(set) var totalBytesReceived = 0

    private var channel: KecalekChannel?
    private var generation = 0
    private var hasConnected = false
    private var closed = false
    private var reconnectTask: Task<Void, Never>?
    /// Bumped when a reconnect loop starts or a connection opens, so that a loop that is no longer
    /// the current one stops instead of racing the new one.
    private var reconnectEpoch = 0
    private var connectAttempt: Task<Void, any Error>?
    private var pending: [String: PendingRequest] = [:]
    private var waiters: [UUID: Waiter] = [:]

    /// Conversations opened with offset 0; refreshed after a reconnect.
    var openConversations: [String] = []
    /// Conversations whose cache is current on connection `generation`: new messages may be stored directly.
    var syncedOnGeneration: [String: Int] = [:]
    /// The largest page any `get_messages` answered so far: a shorter page cannot be the server's page-size
    /// cap, so it ends a listing without another request.
    var largestPageSeen = 0
    /// Page fetches running now, shared by callers asking for the same page.
    var sharedSyncs: [SharedSyncKey: SharedSync] = [:]
    /// Syncs running per conversation.
    var syncsInFlight: [String: Int] = [:]
    /// `new_message` notifications that arrived while a sync of their conversation ran.
    var bufferedNewMessages: [String: [KecalekWireMessage]] = [:]
    /// IDs a `message_deleted` notification removed while a sync of their conversation ran: a page
    /// fetched before the deletion may still carry them, and writing it must not bring them back.
    /// Reaction and pin notifications applied while a sync of the conversation ran, by message: the sync's
    /// write replays them over what it fetched, since they are newer than its pages.
    var changedDuringSync: [String: [String: [KecalekNotification]]] = [:]
    var deletedDuringSync: [String: Set<String>] = [:]
    /// Read receipts seen since launch; never cached.
    var readReceipts: [String: [String: [KecalekReadReceipt]]] = [:]

    private struct Waiter {
        let continuation: CheckedContinuation<Bool, Never>
        let timer: Task<Void, Never>
    }

    private struct PendingRequest {
        let type: String
        let continuation: CheckedContinuation<Result<(KecalekResponse, Int), KecalekError>, Never>
        let timeout: Task<Void, Never>
    }

    /// Creates a client; call ``connect()`` to go online (``messages(conversation:limit:offset:)``
    /// answers from the cache until then).
    ///
    /// - Parameters:
    ///   - configuration: The user and timings.
    ///   - transport: Opens connections (again on every reconnect).
    ///   - cache: The local message cache; the client is its only writer.
    ///   - decryptor: Opens `encrypted_payload` blobs.
    ///   - clock: Every timeout and reconnect delay runs on it.
    ///   - logger: Receives warnings (unknown notifications, skipped messages); never message content.
    public init(
        configuration: Configuration, transport: any KecalekTransport, cache: any KecalekMessageCache,
        decryptor: any KecalekMessageDecryptor, clock: any Clock<Duration>, logger: TidingsLogger = .disabled
    ) {
        self.configuration = configuration
        self.transport = transport
        self.cache = cache
        self.executor = cache.executor ?? SQLiteExecutor(label: "tidings.kecalek")
        self.decryptor = decryptor
        self.clock = clock
        self.log = logger.scoped("kecalek")
        (changes, changeContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    // MARK: Connection

    /// Opens the connection if it is not open.
    ///
    /// When this is a reconnect, open conversations are refreshed in the background.
    /// - Throws: ``KecalekError/closed`` after ``close()``; the transport's error when it cannot connect.
    public func connect() async throws {
        if closed { throw KecalekError.closed }
        if connectionState == .connected, channel != nil { return }
        // One attempt at a time: a manual connect during a reconnect joins it instead of opening a
        // second connection.
        if let attempt = connectAttempt { return try await attempt.value }
        let attempt = Task { try await self.openConnection() }
        connectAttempt = attempt
        defer { connectAttempt = nil }
        try await attempt.value
    }

    private func openConnection() async throws {
        setState(.connecting)
        let opened: KecalekChannel
        do {
            opened = try await transport.connect()
        } catch {
            // While the reconnect loop runs the client stays `connecting`, so waiting requests keep waiting.
            if channel == nil, reconnectTask == nil { setState(.disconnected) }
            throw error
        }
        if closed {
            await opened.close()
            throw KecalekError.closed
        }
        generation += 1
        let current = generation
        channel = opened
        // Cleared in the same actor turn as the channel is set: if this connection ends at once, the
        // next `connectionEnded` must be free to start a new reconnect loop.
        reconnectTask = nil
        reconnectEpoch += 1
        setState(.connected)
        Task { await self.readLoop(opened, generation: current) }
        resumeWaiters(connected: true)
        let isReconnect = hasConnected
        hasConnected = true
        if isReconnect {
            Task { _ = await self.refreshOpenConversations() }
        }
    }

    /// Closes the connection for good: pending requests fail with ``KecalekError/closed``, no reconnect
    /// follows, and ``changes`` finishes.
    public func close() async {
        closed = true
        reconnectTask?.cancel()
        reconnectTask = nil
        let open = channel
        channel = nil
        failPending(.closed)
        setState(.disconnected)
        resumeWaiters(connected: false)
        await open?.close()
        changeContinuation.finish()
    }

    /// Drops the current connection as if the network went away (the reconnect policy then applies).
    public func dropConnection() async {
        guard let open = channel else { return }
        connectionEnded(generation: generation, error: nil)
        await open.close()
    }

    private func setState(_ state: KecalekConnectionState) {
        guard state != connectionState else { return }
        connectionState = state
        changeContinuation.yield(.connection(state))
    }

    private func readLoop(_ channel: KecalekChannel, generation: Int) async {
        var failure: (any Error)?
        do {
            for try await frame in channel.inbound {
                // Frames still buffered when the client was closed are not applied: a closed client never
                // writes the cache again (another client may own it by then).
                guard generation == self.generation, !closed else { break }
                await receive(frame)
            }
        } catch {
            failure = error
        }
        connectionEnded(generation: generation, error: failure)
    }

    private func connectionEnded(generation ended: Int, error: (any Error)?) {
        guard ended == generation, channel != nil else { return }
        channel = nil
        log.notice("connection lost\(error.map { ": \(type(of: $0))" } ?? "")")
        failPending(.connectionLost)
        setState(.disconnected)
        if configuration.reconnects && !closed { startReconnecting() }
    }

    private func startReconnecting() {
        guard reconnectTask == nil else { return }
        setState(.connecting)
        reconnectEpoch += 1
        let epoch = reconnectEpoch
        reconnectTask = Task {
            var failures = 0
            while !Task.isCancelled, epoch == reconnectEpoch {
                let delay = configuration.reconnectDelay(afterFailures: failures)
                do { try await clock.sleep(for: delay) } catch { break }
                guard epoch == reconnectEpoch else { break }
                if await attemptReconnect() { break }
                failures += 1
            }
        }
    }

    /// True when the loop should stop: connected (``openConnection()`` already ended the loop) or closed.
    private func attemptReconnect() async -> Bool {
        do {
            try await connect()
            return true
        } catch {
            if closed { return true }
            log.info("reconnect failed: \(type(of: error))")
            return false
        }
    }

    private func failPending(_ error: KecalekError) {
        let failed = pending
        pending.removeAll()
        for (_, request) in failed {
            request.timeout.cancel()
            request.continuation.resume(
                returning: .failure(KecalekError(error.code, operation: request.type, detail: nil)))
        }
    }

    // MARK: Requests

    /// Sends one request and waits for its response.
    ///
    /// - Returns: The outcome (a non-`ok` status is a ``KecalekError/server`` failure) and the record of
    ///   what crossed the wire.
    func request(_ type: String, _ parameters: [String: JSONValue], items: (KecalekResponse) -> Int = { _ in 0 })
        async -> (Result<KecalekResponse, KecalekError>, KecalekRequestRecord)
    {
        let frame = KecalekRequest(type: type, requestID: UUID().uuidString.lowercased(), parameters: parameters)
        let bytes = frame.encoded()
        var record = KecalekRequestRecord(
            type: type, since: (parameters["after_ts"] ?? parameters["since"])?.stringValue,
            offset: parameters["offset"]?.intValue, itemCount: 0, bytesSent: 0, bytesReceived: 0, failure: nil)
        do {
            try await waitForConnection(operation: type)
        } catch {
            record.failure = error
            return (.failure(error), record)
        }
        let outcome = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<(KecalekResponse, Int), KecalekError>, Never>) in
            Task { await self.transmit(bytes, id: frame.requestID, type: type, continuation: continuation) }
        }
        switch outcome {
        case .success(let (response, received)):
            record.bytesSent = bytes.count
            record.bytesReceived = received
            guard response.isOK else {
                let error = KecalekError(
                    .server, operation: type,
                    detail: "status \(response.status)\(response.error.map { ": \($0)" } ?? "")")
                record.failure = error
                return (.failure(error), record)
            }
            record.itemCount = items(response)
            return (.success(response), record)
        case .failure(let error):
            record.bytesSent = error == .notConnected ? 0 : bytes.count
            record.failure = error
            return (.failure(error), record)
        }
    }

    private func transmit(
        _ bytes: Data, id: String, type: String,
        continuation: CheckedContinuation<Result<(KecalekResponse, Int), KecalekError>, Never>
    ) async {
        guard let channel, connectionState == .connected else {
            continuation.resume(returning: .failure(KecalekError(.notConnected, operation: type)))
            return
        }
        let timeout = configuration.requestTimeout
        let timer = Task { [clock] in
            do { try await clock.sleep(for: timeout) } catch { return }
            self.expire(id)
        }
        pending[id] = PendingRequest(type: type, continuation: continuation, timeout: timer)
        totalBytesSent += bytes.count
        do {
            try await channel.send(bytes)
        } catch {
            guard let request = pending.removeValue(forKey: id) else { return }
            request.timeout.cancel()
            request.continuation.resume(returning: .failure(KecalekError(.connectionLost, operation: type)))
        }
    }

    private func expire(_ id: String) {
        guard let request = pending.removeValue(forKey: id) else { return }
        log.warning("\(request.type) timed out after \(configuration.requestTimeout)")
        request.continuation.resume(
            returning: .failure(
                KecalekError(.timeout, operation: request.type, detail: "no answer in \(configuration.requestTimeout)"))
        )
    }

    private func waitForConnection(operation: String) async throws(KecalekError) {
        if closed { throw KecalekError(.closed, operation: operation) }
        if connectionState == .connected, channel != nil { return }
        let wait = configuration.reconnectWait
        guard connectionState == .connecting, wait > .zero else {
            throw KecalekError(.notConnected, operation: operation, detail: "offline")
        }
        let id = UUID()
        let connected = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            Task { self.addWaiter(id, continuation, wait: wait) }
        }
        guard connected, channel != nil else {
            throw KecalekError(.notConnected, operation: operation, detail: "no reconnect within \(wait)")
        }
    }

    private func addWaiter(_ id: UUID, _ continuation: CheckedContinuation<Bool, Never>, wait: Duration) {
        if connectionState == .connected {
            continuation.resume(returning: true)
            return
        }
        if closed || connectionState == .disconnected {
            continuation.resume(returning: false)
            return
        }
        let timer = Task { [clock] in
            do { try await clock.sleep(for: wait) } catch { return }
            self.expireWaiter(id)
        }
        waiters[id] = Waiter(continuation: continuation, timer: timer)
    }

    private func expireWaiter(_ id: UUID) {
        waiters.removeValue(forKey: id)?.continuation.resume(returning: false)
    }

    /// Answers every waiting request; their timers are cancelled so no sleeper outlives its wait.
    private func resumeWaiters(connected: Bool) {
        let answered = waiters
        waiters.removeAll()
        for (_, waiter) in answered {
            waiter.timer.cancel()
            waiter.continuation.resume(returning: connected)
        }
    }

    // MARK: Inbound

    private func receive(_ frame: Data) async {
        totalBytesReceived += frame.count
        let inbound: KecalekInbound
        do {
            inbound = try KecalekInbound(frame: frame)
        } catch {
            log.warning("ignored malformed frame (\(frame.count) bytes): \(error)")
            return
        }
        switch inbound {
        case .response(let response):
            guard let request = pending.removeValue(forKey: response.requestID) else {
                log.notice("ignored response to unknown or expired request \(response.type)")
                return
            }
            request.timeout.cancel()
            request.continuation.resume(returning: .success((response, frame.count)))
        case .notification(let notification):
            await apply(notification)
        }
    }

    func emit(_ change: KecalekChange) { changeContinuation.yield(change) }

    var currentGeneration: Int { generation }
}
