import Foundation
import TidingsCore
import TidingsNet

/// The Kecalek engine: owns the connection, the message cache and the clock, syncs conversations
/// incrementally and applies server notifications.
///
/// Guarantees:
/// - Every request carries a fresh `request_id`; its response is matched by that ID within
///   ``Configuration/requestTimeout`` on the injected clock, or the request fails with
///   ``KecalekError/timeout``.
/// - A request made while disconnected waits up to ``Configuration/reconnectWait`` for the
///   reconnect, then fails with ``KecalekError/notConnected``.
/// - Each fetched page is written to the cache in one transaction as it arrives; the deletions the sync
///   learned and the new sync point follow in one more. The sync point only moves when everything up to
///   it is stored and the deletions since the old one are applied, so a sync cut off between pages (a lost
///   connection, a killed app) leaves a cache that the next sync completes.
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
        /// The delays before reconnect attempts: full jitter below a ceiling that doubles per failed attempt
        /// from `base` up to `cap` (see `Backoff` in TidingsCore); each outage starts again from `base`.
        public var reconnectBackoff: Backoff
        /// The most `get_messages` pages one incremental sync asks for before answering.
        public var maximumIncrementalPages: Int
        /// How many conversations (the most recently opened) a reconnect refreshes; older ones are
        /// refreshed when opened again, not on every reconnect forever.
        public var maximumOpenConversations: Int

        /// Creates a configuration with the defaults (10 s timeout, 10 s reconnect wait, reconnect backoff
        /// with full jitter from 1 s capped at 30 s, 20 pages, 16 open conversations).
        public init(
            userID: String, requestTimeout: Duration = .seconds(10), reconnectWait: Duration = .seconds(10),
            reconnects: Bool = true, reconnectBackoff: Backoff = Backoff(base: .seconds(1), cap: .seconds(30)),
            maximumIncrementalPages: Int = 20, maximumOpenConversations: Int = 16
        ) {
            self.maximumOpenConversations = maximumOpenConversations
            self.userID = userID
            self.requestTimeout = requestTimeout
            self.reconnectWait = reconnectWait
            self.reconnects = reconnects
            self.reconnectBackoff = reconnectBackoff
            self.maximumIncrementalPages = maximumIncrementalPages
        }
    }

    /// The configuration.
    public nonisolated let configuration: Configuration
    /// A new subscriber's changes, from this access on, with the default buffer (256 unread changes).
    ///
    /// Each access is a separate subscription: subscribe before the action whose changes you wait for.
    /// See ``changes(bufferingLimit:)`` for what a subscriber that lags receives.
    public nonisolated var changes: KecalekChanges { changes(bufferingLimit: 256) }

    /// A new subscriber's stream of the changes the client makes from now on, in the order it made them.
    ///
    /// Every screen (or other reader) subscribes for itself and sees every change; none takes another's.
    /// The subscriber keeps at most `bufferingLimit` unread changes: when it lags further, the oldest are
    /// dropped and it next reads ``KecalekChange/missedChanges(count:)`` — re-read what it shows from
    /// ``messages(conversation:limit:offset:)`` or the cache — followed by the newer changes. The stream
    /// ends when the reading task is cancelled or the stream is released (the subscriber is removed) and,
    /// after the buffered changes, on ``close()``.
    public nonisolated func changes(bufferingLimit: Int) -> KecalekChanges {
        broadcaster.subscribe(bufferingLimit: bufferingLimit)
    }

    let transport: any KecalekTransport
    let cache: any KecalekMessageCache
    let decryptor: any KecalekMessageDecryptor
    let clock: any Clock<Duration>
    let log: TidingsLogger
    /// Fans changes out to every subscriber of ``changes(bufferingLimit:)``.
    package nonisolated let broadcaster = ChangeBroadcaster<KecalekChange> { .missedChanges(count: $0) }
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
    /// Requests waiting for their responses, by request ID.
    private let requests: RequestCorrelator<KecalekReply>
    /// Requests made while reconnecting, waiting for the connection.
    private let reconnectWaiters: ReconnectWaiters

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
        self.requests = RequestCorrelator(clock: clock)
        self.reconnectWaiters = ReconnectWaiters(clock: clock)
        self.log = logger.scoped("kecalek")
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
    /// follows, and every ``changes(bufferingLimit:)`` stream finishes once its buffer is read.
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
        broadcaster.finish()
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
        broadcaster.publish(.connection(state))
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
        let driver = ReconnectDriver(backoff: configuration.reconnectBackoff, clock: clock)
        reconnectTask = Task {
            await driver.run(isolation: self) {
                guard epoch == self.reconnectEpoch else { return true }
                return await self.attemptReconnect()
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

    private func failPending(_ error: MessagingError) {
        requests.failAll(error)
    }

    // MARK: Requests

    /// Sends one request and waits for its response.
    ///
    /// - Returns: The outcome (a non-`ok` status is a ``KecalekError/server`` failure) and the record of
    ///   what crossed the wire.
    func request(_ type: String, _ parameters: [String: JSONValue], items: (KecalekResponse) -> Int = { _ in 0 })
        async -> (Result<KecalekResponse, KecalekError>, KecalekRequestRecord)
    {
        var record = KecalekRequestRecord(
            type: type, since: (parameters["after_ts"] ?? parameters["since"])?.stringValue,
            offset: parameters["offset"]?.intValue, itemCount: 0, bytesSent: 0, bytesReceived: 0, failure: nil)
        do {
            try await waitForConnection(operation: type)
        } catch {
            record.failure = error
            return (.failure(error), record)
        }
        var sent = 0
        let outcome = await requests.request(timeout: configuration.requestTimeout) { id in
            guard let channel, connectionState == .connected else { throw MessagingError.notConnected }
            let bytes = KecalekRequest(type: type, requestID: id.description, parameters: parameters).encoded()
            sent = bytes.count
            totalBytesSent += bytes.count
            try await channel.send(bytes)
        }
        record.bytesSent = sent
        switch outcome {
        case .success(let reply):
            record.bytesReceived = reply.frameSize
            let response = reply.response
            guard response.isOK else {
                let error = KecalekError(
                    .server, operation: type,
                    detail: "status \(response.status)\(response.error.map { ": \($0)" } ?? "")")
                record.failure = error
                return (.failure(error), record)
            }
            record.itemCount = items(response)
            return (.success(response), record)
        case .failure(let failure):
            let error = KecalekError(failure, operation: type)
            if error == .timeout { log.warning("\(type) timed out after \(configuration.requestTimeout)") }
            record.failure = error
            return (.failure(error), record)
        }
    }

    private func waitForConnection(operation: String) async throws(KecalekError) {
        if closed { throw KecalekError(.closed, operation: operation) }
        if connectionState == .connected, channel != nil { return }
        let wait = configuration.reconnectWait
        guard connectionState == .connecting, wait > .zero else {
            throw KecalekError(.notConnected, operation: operation, detail: "offline")
        }
        let connected = await reconnectWaiters.wait(atMost: wait)
        guard connected, channel != nil else {
            throw KecalekError(.notConnected, operation: operation, detail: "no reconnect within \(wait)")
        }
    }

    /// Answers every request waiting for the connection.
    private func resumeWaiters(connected: Bool) {
        reconnectWaiters.resumeAll(reconnected: connected)
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
            if requests.deliver(KecalekReply(response: response, frameSize: frame.count)) != .resolved {
                log.notice("ignored response to unknown or expired request \(response.type)")
            }
        case .notification(let notification):
            await apply(notification)
        }
    }

    func emit(_ change: KecalekChange) { broadcaster.publish(change) }

    var currentGeneration: Int { generation }
}
