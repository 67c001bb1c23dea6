/// The one observable sync status UIs bind to; its parts are named after the document's testability
/// identifiers (`syncing-indicator`, `offline-banner`, `connection-status`; `chat-history` is the store's
/// chat list).
public struct OpenMatesSyncStatus: Sendable, Hashable {
    /// The connection's state (`connection-status`).
    public enum Connection: Sendable, Hashable {
        /// Not connected and not trying (before start, after close or logout).
        case disconnected
        /// The first connection is being opened.
        case connecting
        /// Open.
        case connected
        /// The connection was lost; reconnect attempt `attempt` (1-based) is under way or waiting its delay.
        case reconnecting(attempt: Int)
        /// Reconnecting failed ``OpenMatesClient/Configuration/maximumReconnectAttempts`` times in a row: a
        /// visible failure while the client keeps trying at its backoff's cap; ``OpenMatesClient/start()`` or
        /// ``OpenMatesClient/reconnectNow()`` try at once, from ``connecting``.
        case failed
    }

    /// Whether the local store shows everything the server has.
    public enum Sync: Sendable, Hashable {
        /// No sync was asked for yet.
        case idle
        /// A phased sync is under way, or the server reports chats that have not arrived (also with an
        /// empty store and a cold server cache). Nothing but the server's data ends it: there is no timeout.
        case pending
        /// The server said the sync is complete and every chat it reported is stored.
        case complete
    }

    /// Phase 3, which runs only when the app asks for it (``OpenMatesClient/requestBackgroundSync()``).
    public enum BackgroundSync: Sendable, Hashable {
        /// Not asked for on this connection.
        case idle
        /// Asked for; `batches` distinct `background_message_sync` batches applied so far, the last not yet.
        case running(batches: Int)
        /// The batch marked `is_last_batch` arrived (or the server completed phase 3 with no batch at all).
        case finished(batches: Int)
    }

    /// The connection (`connection-status`).
    public var connectionStatus: Connection = .disconnected
    /// Phase 3's progress.
    public var backgroundSync: BackgroundSync = .idle
    /// The sync's state.
    public var sync: Sync = .idle
    /// Whether the app is offline: the connection was lost or could not be opened (`offline-banner`).
    public var offlineBanner: Bool = false
    /// How many chats the server last reported (`sync_status_response`, phase 2's total), when it did.
    public var serverChatCount: Int?
    /// Whether the server's cache reported itself primed on this connection (nil: not answered yet). Sync is
    /// complete only once it is true: the server answers a phased sync on a cold cache from its database (the
    /// last chat's content only) and pushes `cache_primed` when its re-warm ends, and `sync_status_response` may
    /// come after `phased_sync_complete`, so an unanswered status is not taken for a warm cache.
    public var cacheIsPrimed: Bool?
    /// The last error the server or the connection reported, for the UI (never secrets).
    public var lastError: String?
    /// Stored chats the server may have deleted that the last verification could not check (its content request
    /// went unanswered, or answers could not be matched to requests): while above 0 the chat list may show chats
    /// the server no longer has, even when ``sync`` is complete. Set when such a verification ends; back to 0
    /// only when a later sync completes with every stored chat accounted for (or the store is reset).
    public var unverifiedChatCount = 0

    /// Whether the UI should say the chat list "may be stale" (``unverifiedChatCount`` above 0).
    public var mayBeStale: Bool { unverifiedChatCount > 0 }

    /// Creates the status of a client that has not started.
    public init() {}

    /// Whether the syncing indicator shows (`syncing-indicator`): exactly while sync is pending.
    public var syncingIndicator: Bool { sync == .pending }
}

/// The pure rules of ``OpenMatesSyncStatus``: connection events and sync signals in, status out.
///
/// Sync becomes pending with every `phased_sync_request` (startup, every reconnect, `cache_primed`) and is
/// complete only when `phased_sync_complete` arrived for the latest request, the server reported its cache primed
/// on this connection (`sync_status_response` with `is_primed: true`, or `cache_primed`),
/// the store holds at least as many chats as the server reported (up to the store's window), and no
/// verification of stored chats the server may have deleted is running (``verification(running:storedChatCount:unverified:)``). Thin
/// cache-warming events and the passing of time change nothing.
public struct OpenMatesSyncStatusTracker: Sendable, Hashable {
    /// The current status.
    public private(set) var status = OpenMatesSyncStatus()
    /// The store's chat window: a server count above it is satisfied by a full window.
    public let storeWindow: Int
    private var completeReceived = false
    private var verifying = false
    /// A verification of this sync ended with chats unchecked: its completion does not clear
    /// ``OpenMatesSyncStatus/unverifiedChatCount``.
    private var leftUnverified = false

    /// Creates a tracker for a store that keeps `storeWindow` chats.
    public init(storeWindow: Int = 100) { self.storeWindow = max(1, storeWindow) }

    /// The first connection is being opened.
    public mutating func connecting() { status.connectionStatus = .connecting }

    /// A connection opened.
    public mutating func connected() {
        status.connectionStatus = .connected
        status.offlineBanner = false
        // The server may have restarted cold meanwhile: its cache is asked about again on every connection.
        status.cacheIsPrimed = nil
    }

    /// The connection was lost or could not be opened; `attempt` is the reconnect attempt under way.
    public mutating func reconnecting(attempt: Int) {
        status.connectionStatus = .reconnecting(attempt: attempt)
        status.offlineBanner = true
    }

    /// Reconnecting failed too often in a row (the client may still be trying), or reconnects are off.
    public mutating func failed(_ reason: String) {
        status.connectionStatus = .failed
        status.offlineBanner = true
        status.lastError = reason
    }

    /// Records an error the UI may show (``OpenMatesSyncStatus/lastError``); nothing else changes.
    public mutating func noteError(_ message: String) { status.lastError = message }

    /// The client stopped (closed, logged out).
    public mutating func stopped() {
        status.connectionStatus = .disconnected
    }

    /// A `phased_sync_request` was sent: pending until this request completes. A request for another phase than
    /// `phase3` (a reconnect's `all`) ends phase 3's progress: its batches will not come on that request (the
    /// client asks for phase 3 again once that sync is complete).
    public mutating func syncRequested(phase: String = "all") {
        completeReceived = false
        verifying = false
        leftUnverified = false
        status.sync = .pending
        status.backgroundSync = phase == "phase3" ? .running(batches: 0) : .idle
    }

    /// The local store was emptied on purpose (``OpenMatesClient/resetLocalStore()``): whatever completed
    /// before is about the old store, so sync is pending (also while offline) until a new request completes.
    public mutating func storeReset() {
        completeReceived = false
        status.sync = .pending
        // Nothing stored can be stale.
        status.unverifiedChatCount = 0
    }

    /// Stored chats the server may have deleted are being verified (`running`), or that ended: while it runs
    /// the store may still show chats the server no longer has, so sync is pending. `storedChatCount` is the
    /// store's chat count now; `unverified` is how many chats an ending verification left unchecked (they stay in
    /// ``OpenMatesSyncStatus/unverifiedChatCount`` until a later sync completes with none left).
    public mutating func verification(running: Bool, storedChatCount: Int, unverified: Int = 0) {
        verifying = running
        if !running, unverified > 0 {
            leftUnverified = true
            status.unverifiedChatCount = unverified
        }
        reevaluate(storedChatCount: storedChatCount)
    }

    /// Applies one signal; `storedChatCount` is the store's chat count after the event's changes.
    public mutating func apply(_ signal: OpenMatesSyncSignal, storedChatCount: Int) {
        switch signal {
        case .syncComplete(let phase):
            completeReceived = true
            if phase == "phase3", case .running(let batches) = status.backgroundSync {
                status.backgroundSync = .finished(batches: batches)
            }
        case .batchApplied(_, let isLast):
            // Duplicates never get here (the applier drops a batch number seen in this sync).
            if case .running(let batches) = status.backgroundSync {
                status.backgroundSync = isLast ? .finished(batches: batches + 1) : .running(batches: batches + 1)
            }
        case .cacheStatus(let primed, let count):
            status.cacheIsPrimed = primed
            if let count { status.serverChatCount = count }
        case .totalChatCount(let total): status.serverChatCount = total
        case .chatsDeleted(let chatIDs):
            // The server's count was reported before the client learned of these deletions (the next sync
            // reports afresh): without this, a chat deleted while online would hold the status at pending.
            if let count = status.serverChatCount { status.serverChatCount = max(0, count - chatIDs.count) }
        case .requestFreshSync: status.cacheIsPrimed = true
        case .initialSyncFailed(let message): status.lastError = "initial sync failed: \(message)"
        case .serverError(let message): status.lastError = message
        // The public server answers `sync_offline_changes` this way without applying anything: a failure the UI
        // shows, never a success.
        case .offlineSyncReply(let processed, _, _) where processed == 0:
            status.lastError = "offline_sync_complete: the server applied nothing"
        default: break
        }
        reevaluate(storedChatCount: storedChatCount)
    }

    /// Re-checks completion after the store changed without a signal.
    public mutating func reevaluate(storedChatCount: Int) {
        guard status.sync != .idle else { return }
        let expected = min(status.serverChatCount ?? 0, storeWindow)
        let complete =
            completeReceived && status.cacheIsPrimed == true && storedChatCount >= expected && !verifying
        status.sync = complete ? .complete : .pending
        // Every stored chat is accounted for by a sync that verified what it had to.
        if complete, !leftUnverified { status.unverifiedChatCount = 0 }
    }
}
