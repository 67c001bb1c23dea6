/// Switches for what a real OpenMates server may do, so tests meet the servers the client must survive
/// rather than one shaped like the client.
public struct OpenMatesSandboxVariant: Sendable, Hashable {
    /// Sends each message as a JSON string of its object instead of the object.
    public var messagesAsJSONStrings = false
    /// Sends the phases of an `all` sync in another order: phase 2, then phase 1, then phase 1b.
    public var reorderPhases = false
    /// Sends phase 1b before every other phase of an `all` sync (before phase 1's metadata, which tells parents
    /// from sub-chats).
    public var contentPhaseFirst = false
    /// Phase 1b also carries the content of its parents' direct sub-chats (which do not count toward its cap
    /// of 10 parents).
    public var subChatContentInPhase1b = false
    /// Phase 3 also carries the chats phase 1b covers (the first 10 of the order), as the seeds' README reads the
    /// real handler ("asking for phase 3 alone does not skip the 1b chats"); by default it sends only the rest.
    public var phase3RepeatsContentPhaseChats = false
    /// Event types of a phased sync that never come (`phase_1b_chat_content_ready`, `phased_sync_complete`, …).
    public var withheldEvents: Set<String> = []
    /// Sends the thin cache-warming variant before each phase event (`{chat_id}`, `{chat_count}`).
    public var thinEventsInterleaved = false
    /// Sends every phase event and batch twice.
    public var duplicateDeliveries = false
    /// Cuts the connection right after sending this event type, once.
    public var disconnectAfter: String?
    /// The cache is cold, as after the public server's restart: `sync_status_response` says `is_primed: false`
    /// and phased syncs are answered from the database (phase 1b with the last chat's content only, phase 2
    /// entries with the draft fields beside the details) until ``OpenMatesSandboxServer/primeCache()`` ends the
    /// re-warm with thin phase events and `cache_primed`.
    public var coldCache = false
    /// Chats whose content batch answer fails with a `partial_error` naming them.
    public var contentFailures: Set<String> = []
    /// A content batch leaves a chat the server does not have out of the answer entirely (no key at all), as this
    /// sandbox used to. Off, the default, the answer carries an empty `messages_by_chat_id` list for it and no
    /// `versions_by_chat_id` entry, as the public server's `chat_content_batch_handler` does.
    public var deletedChatsLeftOutOfContent = false
    /// Chats a content batch never answers: a request naming one of them gets no answer at all (the client's
    /// hydration timeout then ends the loading state).
    public var contentNeverAnswered: Set<String> = []
    /// Phase 2's `total_chat_count` is not lowered promptly: it is the count the server had when it sent the
    /// previous phase 2 (a cached count refreshed after each use), so a deletion shows in it one sync late.
    /// A client that relied on the count alone would keep a chat deleted while it was offline for a sync.
    public var lateTotalChatCount = false
    /// Action event types (`update_chat`, `encrypted_chat_metadata`, …) refused with `error` {message, chat_id},
    /// the reference server's handlers' form; nothing is applied.
    public var refusedActions: Set<String> = []
    /// The server's AI cache lacks every chat: `chat_message_added` without `message_history` is answered only by
    /// `request_chat_history` {chat_id, reason} (nothing applied, no AI task), as the reference server does.
    public var aiCacheLacksHistory = false
    /// Action event types applied but never answered: the answers to the acting connection are dropped, as when
    /// the connection fails after the server applied it.
    public var unansweredActions: Set<String> = []

    /// The app-level `ping` gets no `pong`, as from a server that died behind a socket still open.
    public var unansweredPings = false

    /// The plain server.
    public init() {}
}
