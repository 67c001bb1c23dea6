/// What the engine learns from one event besides store changes: inputs of the sync status and things to do.
public enum OpenMatesSyncSignal: Sendable, Hashable {
    /// A phase's real (not thin) event arrived: `phase1`, `phase1b`, `phase2`, `phase3`.
    case phaseArrived(String)
    /// A phase 3 batch was applied.
    case batchApplied(number: Int?, isLast: Bool)
    /// A phase 3 batch number seen before in this sync: ignored.
    case duplicateBatch(Int)
    /// A cache-warming event without sync data: ignored for the store and the status.
    case thinEvent(type: String)
    /// `phased_sync_complete`.
    case syncComplete(phase: String?)
    /// The server's cache status.
    case cacheStatus(isPrimed: Bool, chatCount: Int?)
    /// Phase 2 stated how many chats the user has.
    case totalChatCount(Int)
    /// `cache_primed` with `full_sync_ready`: send a fresh `phased_sync_request`.
    case requestFreshSync
    /// Chats whose content a content batch delivered.
    case hydrated([String])
    /// Chats a content batch's `partial_error` names (all requested ones when it names none).
    case hydrationFailed(chatIDs: [String], message: String)
    /// These chats were deleted: by `chat_deleted`, `chat_ids_to_delete`, or a content answer that left them out.
    case chatsDeleted([String])
    /// The sync ended with phase 2's `total_chat_count` (`serverTotal`) below the chats stored: these stored
    /// chats, which no phase named this sync, are to be verified with content requests (a deleted one is left
    /// out of its answer).
    case verifyChats(chatIDs: [String], serverTotal: Int)
    /// Phase 1b sent content for more than 10 parent chats; these were kept metadata-only.
    case overCap([String])
    /// `initial_sync_error`.
    case initialSyncFailed(String)
    /// An `error` event.
    case serverError(String)
    /// `offline_sync_complete`; `processed == 0` with actions sent is a failure, never a success.
    case offlineSyncReply(processed: Int, conflicts: Int, errors: Int)
    /// `force_logout`.
    case loggedOut(reason: String?)
}

/// The outcome of one event under the sync rules: changes for the store (one transaction) and signals.
public struct OpenMatesSyncPlan: Sendable, Hashable {
    /// Store changes, in order.
    public var changes: [OpenMatesStoreChange] = []
    /// Signals, in order.
    public var signals: [OpenMatesSyncSignal] = []

    /// An empty plan.
    public init(changes: [OpenMatesStoreChange] = [], signals: [OpenMatesSyncSignal] = []) {
        self.changes = changes
        self.signals = signals
    }
}
