import TidingsCore

/// `phase_1_last_chat_ready`: the last-opened chat and the recent chats' metadata.
///
/// Server cache warming pushes the same event thin (`{chat_id}` only): ``isThin`` is then true and the
/// event must not change or complete anything.
public struct OpenMatesPhase1: Sendable, Hashable {
    /// The last-opened chat's ID.
    public var chatID: String?
    /// Its metadata (nil in a thin event).
    public var chatDetails: OpenMatesChatRecord?
    /// Its messages; nil (`messages: null`) means keep local.
    public var messages: [OpenMatesWireMessage]?
    /// The recent parents and their direct sub-chats.
    public var recentChats: [OpenMatesChatRecord]
    /// New-chat suggestions (objects with an `id`).
    public var suggestions: [[String: JSONValue]]
    /// Daily inspirations (objects with an `id` or `inspiration_id`).
    public var dailyInspirations: [[String: JSONValue]]
    /// Whether the server says the client already had the last chat.
    public var alreadySynced: Bool?
    /// Whether this is a cache-warming event without sync data.
    public var isThin: Bool

    init(payload: [String: JSONValue]) {
        chatID = payload.omID("chat_id")
        chatDetails = payload["chat_details"]?.objectValue.flatMap {
            OpenMatesChatRecord(details: $0, fallbackID: payload.omID("chat_id"))
        }
        var dropped = 0
        messages = OpenMatesWireMessage.list(payload["messages"], dropped: &dropped)
        recentChats = payload.omObjects("recent_chat_metadata").compactMap { OpenMatesChatRecord(entry: $0) }
        suggestions = payload.omObjects("new_chat_suggestions")
        dailyInspirations = payload.omObjects("daily_inspirations")
        alreadySynced = payload.omBool("already_synced")
        // The real event always states its phase; cache warming sends only the chat ID.
        isThin = payload["phase"] == nil && payload["chat_details"] == nil && payload["recent_chat_metadata"] == nil
    }
}

/// `phase_1b_chat_content_ready`, `background_message_sync`: content for several chats.
public struct OpenMatesContentPhase: Sendable, Hashable {
    /// The chats' content.
    public var chats: [OpenMatesChatContent]
    /// Embeds, keys and outputs sent with it.
    public var side: OpenMatesSideData
    /// The batch's number (phase 3), when stated.
    public var batchNumber: Int?
    /// Whether this is phase 3's last batch.
    public var isLastBatch: Bool

    init(payload: [String: JSONValue]) {
        chats = payload.omObjects("chats").compactMap { OpenMatesChatContent(entry: $0) }
        side = OpenMatesSideData(payload: payload)
        batchNumber = payload.omInt("batch_number")
        isLastBatch = payload.omBool("is_last_batch") ?? false
    }
}

/// `phase_2_last_20_chats_ready`, `phase_3_last_100_chats_ready`, `load_more_chats_response`,
/// `sync_metadata_chats_response`: chat metadata (never content).
///
/// Cache warming sends phases 2 and 3 thin (`{chat_count}` only, no `chats`): ``isThin`` is then true.
public struct OpenMatesMetadataPhase: Sendable, Hashable {
    /// The chats' metadata (omitting those the client declared up to date).
    public var chats: [OpenMatesChatRecord]
    /// How many chats this event covers, as the server counts them.
    public var chatCount: Int?
    /// How many chats the user has in all.
    public var totalChatCount: Int?
    /// Whether the server has more (load-more pages).
    public var hasMore: Bool?
    /// Whether this is a cache-warming event without sync data.
    public var isThin: Bool

    init(payload: [String: JSONValue]) {
        chats = payload.omObjects("chats").compactMap { OpenMatesChatRecord(entry: $0) }
        chatCount = payload.omInt("chat_count")
        totalChatCount = payload.omInt("total_chat_count")
        hasMore = payload.omBool("has_more")
        isThin = payload["chats"] == nil
    }
}

/// `sync_status_response` and `cache_status_response`: whether the server's cache is primed and how many
/// chats it holds for the user.
public struct OpenMatesCacheStatus: Sendable, Hashable {
    /// Whether the cache is warm; false keeps sync pending.
    public var isPrimed: Bool
    /// The chats the server has for the user.
    public var chatCount: Int?
    /// The server's time, Unix seconds.
    public var timestamp: Int?

    init(payload: [String: JSONValue]) {
        // `is_primed` at the reference commit; other versions of the handler name it `cache_primed`.
        isPrimed = payload.omBool("is_primed") ?? payload.omBool("cache_primed") ?? false
        chatCount = payload.omInt("chat_count")
        timestamp = payload.omInt("timestamp")
    }
}

/// `chat_content_batch_response`: content for the chats a `request_chat_content_batch` named.
public struct OpenMatesContentBatchResponse: Sendable, Hashable {
    /// One entry per chat the answer has messages or versions for, except those in ``chatsWithoutContent``.
    public var chats: [OpenMatesChatContent]
    /// Chats answered with an empty `messages_by_chat_id` list and no `versions_by_chat_id` entry: how the public
    /// server answers for a chat it no longer has (and, with `partial_error`, for one it failed to read). A chat
    /// that exists always gets its versions, even with no messages, so these carry no content to store.
    public var chatsWithoutContent: [String]
    /// Embeds, keys and outputs sent with it.
    public var side: OpenMatesSideData
    /// The server's text when it could not deliver everything.
    public var partialError: String?
    /// The chats the partial error names (empty when it names none).
    public var failedChatIDs: [String]

    init(payload: [String: JSONValue]) {
        let messages = payload["messages_by_chat_id"]?.objectValue ?? [:]
        let versions = payload["versions_by_chat_id"]?.objectValue ?? [:]
        let checkpoints = payload["compression_checkpoints_by_chat_id"]?.objectValue ?? [:]
        var chats: [OpenMatesChatContent] = []
        var withoutContent: [String] = []
        for chatID in Set(messages.keys).union(versions.keys).sorted() {
            if versions[chatID] == nil, messages[chatID]?.arrayValue?.isEmpty == true {
                withoutContent.append(chatID)
                continue
            }
            var dropped = 0
            let version = versions[chatID]?.objectValue ?? [:]
            chats.append(
                OpenMatesChatContent(
                    chatID: chatID,
                    messages: OpenMatesWireMessage.list(messages[chatID], dropped: &dropped),
                    messagesV: version.omInt("messages_v"), serverMessageCount: version.omInt("server_message_count"),
                    compressionCheckpoints: checkpoints[chatID].flatMap { $0.isNull ? nil : $0 },
                    droppedMessages: dropped))
        }
        self.chats = chats
        chatsWithoutContent = withoutContent
        side = OpenMatesSideData(payload: payload)
        var failed: [String] = []
        var text: String?
        switch payload["partial_error"] {
        case .string(let message)?: text = message
        case .object(let members)?:
            text = members.omString("message") ?? members.omString("error") ?? "partial error"
            failed = (members["chat_ids"]?.arrayValue ?? []).compactMap(\.identifierValue)
            if failed.isEmpty {
                failed = members.keys.filter { $0 != "message" && $0 != "error" }.sorted()
            }
        case .array(let elements)?:
            text = "partial error"
            failed = elements.compactMap { $0.identifierValue ?? $0["chat_id"]?.identifierValue }
        case .bool(true)?: text = "partial error"
        default: break
        }
        partialError = text
        failedChatIDs = failed
    }
}

/// `initial_sync_response`: the older, non-phased sync answer.
public struct OpenMatesInitialSync: Sendable, Hashable {
    /// Chats the server deleted: one of only two sources of deletions.
    public var chatIDsToDelete: [String]
    /// Chats to add or update, with their messages when sent.
    public var chats: [OpenMatesChatRecord]
    /// Their content, for the entries that carried `messages`.
    public var content: [OpenMatesChatContent]
    /// The server's order of chats.
    public var serverChatOrder: [String]

    init(payload: [String: JSONValue]) {
        chatIDsToDelete = (payload["chat_ids_to_delete"]?.arrayValue ?? []).compactMap(\.identifierValue)
        let entries = payload.omObjects("chats_to_add_or_update")
        chats = entries.compactMap { OpenMatesChatRecord(details: $0) }
        content = entries.compactMap { entry in
            guard entry["messages"] != nil, let chatID = entry.omID("chat_id") else { return nil }
            var dropped = 0
            let versions = entry["versions"]?.objectValue ?? [:]
            return OpenMatesChatContent(
                chatID: chatID, messages: OpenMatesWireMessage.list(entry["messages"], dropped: &dropped),
                messagesV: versions.omInt("messages_v"), droppedMessages: dropped)
        }
        serverChatOrder = (payload["server_chat_order"]?.arrayValue ?? []).compactMap(\.identifierValue)
    }
}
