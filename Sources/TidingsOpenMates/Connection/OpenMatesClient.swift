import Foundation
import TidingsCore
import TidingsNet

/// The OpenMates engine: owns the connection, the offline store and the clock; runs the phased sync, applies
/// cross-device updates, hydrates metadata-only chats on open and keeps one honest sync status.
///
/// Guarantees:
/// - Every connection (the first and each reconnect) sends one `phased_sync_request` with `phase: "all"`
///   and the store's full client state, then `sync_status_request`; phase 3 is asked for only by
///   ``requestBackgroundSync()``, through the same path, and `background_message_sync` is never sent. Sync status goes back to pending with each request and is complete
///   only by the server's data (``OpenMatesSyncStatusTracker``); no timeout completes it.
/// - Each event's store changes are one transaction (``OpenMatesStore/apply(_:)``).
/// - A lost connection is reopened after a full-jitter backoff (1 → 30 s by default) on the injected clock; the
///   backoff starts over only after a connection that stayed open ``Configuration/healthyConnection``
///   (``ReconnectHealth``), so a server that accepts and drops at once is retried at a growing delay, not every
///   second. After
///   ``Configuration/maximumReconnectAttempts`` failed attempts in a row the status is `failed` (announced once
///   with ``Change/failure(_:)``) and the attempts go on at the backoff's cap until one succeeds; ``start()`` or
///   ``reconnectNow()`` (the network came back) tries at once.
/// - App-level pings go out every ``Configuration/pingInterval`` on the clock; one left without a `pong` for
///   ``Configuration/pongTimeout`` ends the connection (then reconnect and a new `phased_sync_request`); the
///   server's pings are answered with pongs.
/// - `force_logout` erases the store (pending actions and keys included) and stops the client.
/// - Offline actions (``sendMessage(chatID:messageID:encryptedContent:createdAt:askAI:)``, …) replay in order on
///   every connection, one at a time, in the reference server's events, each confirmed by its answer or failed
///   explicitly after
///   ``Configuration/maximumActionTries`` tries (``Change/actionFailed(_:_:)``); none is dropped silently.
///
/// - At most one `request_chat_content_batch` is in flight per connection, so each answer is matched to its
///   request: a requested chat it leaves out (no messages, no versions, not in `partial_error`) was deleted on
///   the server and is deleted here with a tombstone (``Change/chatsDeleted(_:)``). A sync whose phase 2 reports
///   fewer chats than the store holds verifies the chats it did not name that way, sync pending meanwhile. The
///   server's deletion wins over queued actions on the chat: they fail at once (``Change/actionFailed(_:_:)``).
///
/// It runs on its store's executor, so its synchronous store calls never block a pool thread.
///
/// For example:
/// ```swift
/// let client = OpenMatesClient(transport: transport, store: store, clock: ContinuousClock())
/// let start = try await client.coldStart()     // from disk, before the network
/// await client.start()
/// for await change in client.changes() { … }
/// ```
public actor OpenMatesClient {
    /// Settings that do not change while the client runs.
    public struct Configuration: Sendable {
        /// Whether a lost connection is reopened.
        public var reconnects: Bool
        /// Delays between reconnect attempts (full jitter below a ceiling doubling from `base` to `cap`).
        public var reconnectBackoff: Backoff
        /// Failed reconnect attempts in a row after which the status is `failed`; the attempts go on at the
        /// backoff's cap.
        public var maximumReconnectAttempts: Int
        /// How long a connection must stay open to prove healthy; one the server ends sooner counts as a failed
        /// attempt for the next outage's backoff (30 s, the Mastodon user stream's rule).
        public var healthyConnection: Duration
        /// How often an app-level `ping` is sent.
        public var pingInterval: Duration
        /// How long a `ping` may stay without a `pong` before the connection is taken for dead, closed and
        /// reopened (at most ``pingInterval``): a silent server is noticed within `pingInterval + pongTimeout`.
        public var pongTimeout: Duration
        /// The most chats one `request_chat_content_batch` names.
        public var contentBatchSize: Int
        /// How long a hydration request may stay unanswered before it is reported failed.
        public var hydrationTimeout: Duration
        /// How long a replayed offline action may stay unanswered before the try counts as failed.
        public var actionTimeout: Duration
        /// Tries per offline action before it fails for good (``Change/actionFailed(_:_:)``).
        public var maximumActionTries: Int

        /// The defaults: reconnect with backoff 1 → 30 s, give up after 10 attempts, ping every 25 s, 10 chats
        /// per content batch, 30 s hydration timeout, 10 s per offline action's try, 3 tries, 10 s for a pong.
        public init(
            reconnects: Bool = true, reconnectBackoff: Backoff = Backoff(base: .seconds(1), cap: .seconds(30)),
            maximumReconnectAttempts: Int = 10, pingInterval: Duration = .seconds(25), contentBatchSize: Int = 10,
            hydrationTimeout: Duration = .seconds(30), actionTimeout: Duration = .seconds(10),
            maximumActionTries: Int = 3, pongTimeout: Duration = .seconds(10),
            healthyConnection: Duration = .seconds(30)
        ) {
            self.reconnects = reconnects
            self.reconnectBackoff = reconnectBackoff
            self.maximumReconnectAttempts = max(1, maximumReconnectAttempts)
            self.pingInterval = pingInterval
            self.contentBatchSize = max(1, contentBatchSize)
            self.hydrationTimeout = hydrationTimeout
            self.actionTimeout = actionTimeout
            self.maximumActionTries = max(1, maximumActionTries)
            self.pongTimeout = max(.zero, min(pongTimeout, pingInterval))
            self.healthyConnection = max(.zero, healthyConnection)
        }
    }

    /// What a subscriber of ``changes(bufferingLimit:)`` learns.
    public enum Change: Sendable, Hashable {
        /// The status changed.
        case status(OpenMatesSyncStatus)
        /// The store changed (re-read the chat list or the open chat).
        case storeChanged
        /// These chats' content arrived.
        case hydrated([String])
        /// The server deleted these chats (`chat_deleted`, `chat_ids_to_delete`, or a content answer that left a
        /// requested chat out): they left the store with a tombstone; a loading state for one of them ends here.
        case chatsDeleted([String])
        /// Something failed that the UI should show: a content batch's `partial_error`
        /// (``OpenMatesError/contentUnavailable`` naming the chats), `error`, `initial_sync_error`, a store error.
        case failure(OpenMatesError)
        /// The server acknowledged an offline action (see ``OpenMatesClient`` actions for each kind's
        /// acknowledgement); it left the queue.
        case actionSucceeded(OpenMatesPendingAction)
        /// An offline action failed for good after its last try (``OpenMatesError/actionFailed``, with the
        /// reason in `detail`); it left the queue and its local effect was undone.
        case actionFailed(OpenMatesPendingAction, OpenMatesError)
        /// The subscriber fell behind and missed this many changes: re-read the state.
        case lagged(Int)
    }

    /// What opening a chat shows.
    public enum ChatContent: Sendable, Hashable {
        /// Every message the server has, from the store.
        case loaded([OpenMatesMessage])
        /// The stored messages are not the chat's final state; its content was requested (loading state).
        case loading(partial: [OpenMatesMessage])
        /// The content is not on this device and there is no connection: not available offline.
        case notAvailableOffline(partial: [OpenMatesMessage])
    }

    let configuration: Configuration
    let transport: any OpenMatesTransport
    /// The store the client writes.
    public nonisolated let store: OpenMatesStore
    let clock: any Clock<Duration>
    let logger: TidingsLogger
    let broadcaster = ChangeBroadcaster<Change> { .lagged($0) }

    var tracker: OpenMatesSyncStatusTracker
    var applier = OpenMatesSyncApplier()
    var channel: OpenMatesChannel?
    var runTask: Task<Void, Never>?
    var pingTask: Task<Void, Never>?
    /// A `ping` went out on the current connection and no `pong` came back since.
    var pongAwaited = false
    var stopped = false
    var published = OpenMatesSyncStatus()
    var hydrationWanted: Set<String> = []
    var hydrationInFlight: Set<String> = []
    var hydrationFlushScheduled = false
    /// The one `request_chat_content_batch` sent on this connection and not answered yet (the wire has no
    /// request ID: one at a time is what lets an answer be matched to its request).
    var contentInFlight: OpenMatesContentRequest?
    var contentRequestSerial = 0
    /// A content request went unanswered on this connection, or an answer did not fit its request: a later
    /// answer may belong to another request, so none is used to infer deletions until the next connection.
    var contentAnswersUnmatched = false
    /// Stored chats the server may have deleted, being verified with content requests.
    var verification = OpenMatesChatVerification()
    /// The queued action sent on the current connection and not answered yet (one at a time, in order).
    var reconnectHealth: ReconnectHealth
    var actionInFlight: Int64?
    var actionTimeoutTask: Task<Void, Never>?
    /// Pongs still to come before the pin in flight counts as read by the server (0: none awaited).
    var actionPongsAwaited = 0
    /// Pings sent on this connection and not answered yet: pongs arrive in order, so the pong answering a pin's
    /// ping is the one after these.
    var pingsUnanswered = 0
    /// The AI request in flight was resent with its history on this try (once per try).
    var historyResent = false
    /// Decrypts a chat's history when the server asks for it (``setContentDecryptor(_:)``); memory only.
    var contentDecryptor: OpenMatesContentDecryptor?
    /// The app asked for phase 3 and it has not finished: a reconnect asks for it again once its `all` sync is
    /// complete (in memory only: a relaunch starts with `all` alone, as the startup contract wants).
    var backgroundSyncWanted = false
    /// Run first by ``logout()``, before the store is erased (Prefetch/: the prefetcher's cancellation).
    var logoutObservers: [@Sendable () async -> Void] = []
    /// Frames sent and received, by type, since the client was created.
    public internal(set) var traffic = OpenMatesTraffic()

    /// Runs the client's jobs on the store's queue.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { store.executor.asUnownedSerialExecutor() }

    /// Creates a client; nothing is sent before ``start()``.
    public init(
        configuration: Configuration = Configuration(), transport: any OpenMatesTransport, store: OpenMatesStore,
        clock: any Clock<Duration>, logger: TidingsLogger = .disabled
    ) {
        self.configuration = configuration
        self.transport = transport
        self.store = store
        self.clock = clock
        self.logger = logger.scoped("openmates")
        self.tracker = OpenMatesSyncStatusTracker(storeWindow: store.maximumChats)
        self.reconnectHealth = ReconnectHealth(healthyAfter: configuration.healthyConnection)
    }

    /// The current status.
    public var status: OpenMatesSyncStatus { tracker.status }

    /// A fresh stream of changes for one subscriber (bounded; a lagging one reads ``Change/lagged(_:)``).
    public nonisolated func changes(bufferingLimit: Int = 256) -> ChangeSubscription<Change> {
        broadcaster.subscribe(bufferingLimit: bufferingLimit)
    }

    /// What the app shows before the network: the chat list and the first 5 chats' messages, embeds and keys.
    ///
    /// - Throws: ``OpenMatesError/store``.
    public func coldStart() throws(OpenMatesError) -> OpenMatesColdStart {
        do { return try store.coldStart() } catch {
            throw OpenMatesError(.store, operation: "coldStart", detail: "\(error)")
        }
    }

    /// The chat list in the server's order: pinned, then last edited (`chat-history`).
    ///
    /// - Throws: ``OpenMatesError/store``.
    public func chatList() throws(OpenMatesError) -> [OpenMatesChat] {
        do { return try store.chatList() } catch {
            throw OpenMatesError(.store, operation: "chatList", detail: "\(error)")
        }
    }

    /// Starts connecting (and reconnecting); returns at once. Calling it again while running does nothing;
    /// after a failure (``OpenMatesSyncStatus/Connection/failed``) it starts over at once from `connecting`,
    /// with a fresh count of reconnect attempts. After ``close()`` or ``logout()`` it does nothing.
    public func start() {
        guard !stopped else { return }
        if runTask != nil, tracker.status.connectionStatus != .failed { return }
        // A failed run is still retrying at the backoff's cap (or returned, with reconnects off): this attempt
        // replaces it, and cancelling it makes sure no stale attempt touches the status.
        runTask?.cancel()
        reconnectHealth.reset()
        tracker.connecting()
        publishStatus()
        runTask = Task { await self.run() }
    }

    /// Tries to connect now instead of after the backoff delay still to wait, for the app's "the network
    /// changed" notification: while reconnecting, the waiting attempt is replaced by one made at once (the
    /// attempt count starts again, as for a new outage); after a failure it is ``start()``. While
    /// connecting or connected, and after ``close()`` or ``logout()``, it does nothing.
    public func reconnectNow() {
        guard !stopped else { return }
        switch tracker.status.connectionStatus {
        case .failed: start()
        case .reconnecting:
            runTask?.cancel()
            reconnectHealth.reset()
            tracker.reconnecting(attempt: 1)
            publishStatus()
            runTask = Task { await self.run() }
        case .connecting, .connected, .disconnected: return
        }
    }

    /// Stops the client: closes the connection, stops reconnecting and ends every change stream.
    ///
    /// When it returns the client has stopped writing to the store, and everything it wrote was announced on the
    /// change streams before they ended. An action in flight stays queued with its tries as they were (closing
    /// is not a refusal): the next client on the same store sends it again.
    public func close() async {
        let running = runTask
        await stop()
        // The run ends at its next suspension; until it has, it could still write to the store (a connection's
        // end, an answer read before the stop) and announce that to a finished stream, which no one would hear.
        await running?.value
        broadcaster.finish()
    }

    /// Starts the local store over on purpose (``OpenMatesStore/resetLocalStore()``, pending actions kept) and,
    /// when connected, syncs again from nothing.
    ///
    /// When it returns, ``status`` is pending (connected or not) and stays so until a sync requested after the
    /// reset completes with the server's chats; a `.status` change published before the call may still be
    /// buffered in a subscriber's stream, so a waiter checks ``status`` rather than the first complete it reads.
    ///
    /// - Throws: ``OpenMatesError/store``.
    public func resetLocalStore() async throws(OpenMatesError) {
        do { try store.resetLocalStore() } catch {
            throw OpenMatesError(.store, operation: "resetLocalStore", detail: "\(error)")
        }
        applier = OpenMatesSyncApplier()
        // The status turns pending before anyone hears of the emptied store, connected or not: a "complete"
        // from before the reset describes chats that are gone (a UI or a waiter would trust an empty list).
        tracker.storeReset()
        publishStatus()
        broadcaster.publish(.storeChanged)
        if let channel { await requestSync(on: channel) }
    }

    /// Logs out: stops the client and erases the store, the pending actions and every key.
    ///
    /// - Throws: ``OpenMatesError/store`` when the store could not be erased.
    public func logout() async throws(OpenMatesError) {
        for observer in logoutObservers { await observer() }
        backgroundSyncWanted = false
        await stop()
        do { try store.eraseAll() } catch { throw OpenMatesError(.store, operation: "logout", detail: "\(error)") }
        broadcaster.publish(.storeChanged)
    }

    func stop() async {
        stopped = true
        runTask?.cancel()
        runTask = nil
        pingTask?.cancel()
        pingTask = nil
        // An action in flight stays queued as it is: the app closed the connection, the server refused nothing.
        finishInFlight()
        let open = channel
        channel = nil
        await open?.close()
        tracker.stopped()
        publishStatus()
    }

    func publishStatus() {
        guard tracker.status != published else { return }
        published = tracker.status
        broadcaster.publish(.status(published))
    }

    func send(_ request: OpenMatesClientRequest, on channel: OpenMatesChannel) async {
        let envelope = request.envelope
        traffic.sent[envelope.type, default: 0] += 1
        if case .ping = request { pingsUnanswered += 1 }
        do { try await channel.send(envelope.text) } catch {
            logger.info("send \(envelope.type) failed: the connection is gone")
        }
    }

    /// Asks the server for phase 3 — `background_message_sync` batches of content for the chats after phase 1b's,
    /// until `is_last_batch` — through the one path that sends `phased_sync_request` (with the full client state).
    /// Startup and reconnects never do: they send `all`. Progress is ``OpenMatesSyncStatus/backgroundSync``
    /// (a duplicate batch counts once); the sync is pending until the server completes phase 3. A lost connection
    /// does not lose it: the reconnect sends `all` (``OpenMatesSyncStatus/backgroundSync`` is `idle` meanwhile)
    /// and, once that sync is complete, asks for phase 3 again, until its last batch has arrived. ``logout()``
    /// and ``close()`` forget it.
    ///
    /// - Returns: Whether it was sent (false while not connected, or after close or logout: nothing is queued).
    @discardableResult
    public func requestBackgroundSync() async -> Bool {
        guard let channel, !stopped else { return false }
        backgroundSyncWanted = true
        await requestSync(on: channel, phase: "phase3")
        return true
    }

    func requestSync(on channel: OpenMatesChannel, phase: String = "all") async {
        let state: OpenMatesClientState
        do { state = try store.clientState() } catch {
            broadcaster.publish(.failure(OpenMatesError(.store, operation: "clientState", detail: "\(error)")))
            state = OpenMatesClientState()
        }
        applier.startSync()
        // A new sync decides afresh which chats need verifying.
        verification = OpenMatesChatVerification()
        tracker.syncRequested(phase: phase)
        publishStatus()
        await send(.phasedSync(phase: phase, state: state), on: channel)
    }
}

/// Counts of frames by type, for summaries (`tidings openmates sync`) and startup-contract tests.
public struct OpenMatesTraffic: Sendable, Hashable {
    /// Frames sent, by type.
    public var sent: [String: Int] = [:]
    /// Frames received, by type.
    public var received: [String: Int] = [:]
}
