import TidingsCore

/// Every server event the client understands, decoded from an ``OpenMatesEnvelope``.
///
/// Decoding never fails on an unknown type (``unknown(type:)``) or on missing optional fields; an event whose
/// required field (a chat ID) is missing decodes as ``malformed(type:detail:)``, which the client logs and
/// ignores.
public enum OpenMatesServerEvent: Sendable, Hashable {
    /// `initial_sync_response`.
    case initialSyncResponse(OpenMatesInitialSync)
    /// `initial_sync_error`: surfaced to the app.
    case initialSyncError(message: String)
    /// `phase_1_last_chat_ready` (thin when sent by cache warming).
    case phase1(OpenMatesPhase1)
    /// `phase_1b_chat_content_ready`.
    case phase1b(OpenMatesContentPhase)
    /// `phase_2_last_20_chats_ready` (thin when sent by cache warming).
    case phase2(OpenMatesMetadataPhase)
    /// `phase_3_last_100_chats_ready` (cache warming sends it thin).
    case phase3Ready(OpenMatesMetadataPhase)
    /// `background_message_sync`: one phase 3 batch.
    case backgroundMessageSync(OpenMatesContentPhase)
    /// `phased_sync_complete` {phase, timestamp}.
    case phasedSyncComplete(phase: String?)
    /// `cache_primed` {status}: `full_sync_ready` asks the client for a fresh phased sync.
    case cachePrimed(status: String?)
    /// `sync_status_response` or `cache_status_response`.
    case syncStatus(OpenMatesCacheStatus)
    /// `load_more_chats_response`.
    case loadMoreChats(OpenMatesMetadataPhase)
    /// `sync_metadata_chats_response`.
    case syncMetadataChats(OpenMatesMetadataPhase)
    /// `offline_sync_complete` {processed, conflicts, errors}: a reply that processed nothing is a failure.
    case offlineSyncComplete(processed: Int, conflicts: Int, errors: Int)
    /// `chat_content_batch_response`.
    case chatContentBatch(OpenMatesContentBatchResponse)
    /// `new_chat_message` from another device.
    case newChatMessage(chatID: String, message: OpenMatesWireMessage, messagesV: Int?, lastEdited: Int?)
    /// `chat_update` / `encrypted_chat_metadata`: metadata changed on another device.
    case chatUpdate(OpenMatesChatRecord)
    /// `message_deleted`.
    case messageDeleted(chatID: String, messageID: String, messagesV: Int?)
    /// `chat_deleted` {chat_id, tombstone}.
    case chatDeleted(chatID: String)
    /// `chat_pinned_updated`.
    case chatPinnedUpdated(chatID: String, pinned: Bool)
    /// `chat_read_status_updated`.
    case chatReadStatusUpdated(chatID: String, unreadCount: Int)
    /// `chat_draft_updated`.
    case chatDraftUpdated(chatID: String, encryptedDraft: String?, draftV: Int?)
    /// An answer to this device's own action: `chat_message_confirmed`, `encrypted_metadata_stored`,
    /// `ai_task_initiated`, `message_queued`, `request_chat_history`, `chat_key_mismatch`,
    /// `incomplete_chat_metadata`. It changes no stored data; it settles the action in flight.
    case actionReply(OpenMatesActionReply)
    /// `force_logout`: the session ended.
    case forceLogout(reason: String?)
    /// `error` {message}.
    case error(message: String)
    /// App-level `ping` from the server.
    case ping
    /// App-level `pong`.
    case pong
    /// An event whose required field is missing or of the wrong shape.
    case malformed(type: String, detail: String)
    /// Any other type (logged and ignored).
    case unknown(type: String)

    /// Decodes an envelope; never throws.
    public init(_ envelope: OpenMatesEnvelope) {
        let payload = envelope.payload
        let type = envelope.type
        switch type {
        case "initial_sync_response": self = .initialSyncResponse(OpenMatesInitialSync(payload: payload))
        case "initial_sync_error":
            self = .initialSyncError(
                message: payload.omString("message") ?? payload.omString("error") ?? "initial sync failed")
        case "phase_1_last_chat_ready": self = .phase1(OpenMatesPhase1(payload: payload))
        case "phase_1b_chat_content_ready": self = .phase1b(OpenMatesContentPhase(payload: payload))
        case "phase_2_last_20_chats_ready": self = .phase2(OpenMatesMetadataPhase(payload: payload))
        case "phase_3_last_100_chats_ready": self = .phase3Ready(OpenMatesMetadataPhase(payload: payload))
        case "background_message_sync": self = .backgroundMessageSync(OpenMatesContentPhase(payload: payload))
        case "phased_sync_complete": self = .phasedSyncComplete(phase: payload.omString("phase"))
        case "cache_primed": self = .cachePrimed(status: payload.omString("status"))
        case "sync_status_response", "cache_status_response": self = .syncStatus(OpenMatesCacheStatus(payload: payload))
        case "load_more_chats_response": self = .loadMoreChats(OpenMatesMetadataPhase(payload: payload))
        case "sync_metadata_chats_response": self = .syncMetadataChats(OpenMatesMetadataPhase(payload: payload))
        case "offline_sync_complete":
            self = .offlineSyncComplete(
                processed: payload.omInt("processed") ?? 0, conflicts: payload.omInt("conflicts") ?? 0,
                errors: payload.omInt("errors") ?? (payload["errors"]?.arrayValue?.count ?? 0))
        case "chat_content_batch_response": self = .chatContentBatch(OpenMatesContentBatchResponse(payload: payload))
        default: self = Self.crossDevice(type: type, payload: payload)
        }
    }

    private static func crossDevice(type: String, payload: [String: JSONValue]) -> OpenMatesServerEvent {
        let chatID = payload.omID("chat_id")
        let versions = payload["versions"]?.objectValue ?? [:]
        switch type {
        case "new_chat_message":
            guard let chatID else { return .malformed(type: type, detail: "no chat_id") }
            guard let raw = payload["message"], var message = OpenMatesWireMessage(wire: raw) else {
                return .malformed(type: type, detail: "no message")
            }
            message.chatID = chatID
            return .newChatMessage(
                chatID: chatID, message: message,
                messagesV: versions.omInt("messages_v") ?? payload.omInt("messages_v"),
                lastEdited: payload.omInt("last_edited_overall_timestamp"))
        case "chat_update", "encrypted_chat_metadata":
            var details = payload["data"]?.objectValue ?? [:]
            for (key, value) in payload where key != "data" && key != "versions" && key != "event" {
                details[key] = details[key] ?? value
            }
            for (key, value) in versions { details[key] = value }
            guard let record = OpenMatesChatRecord(details: details) else {
                return .malformed(type: type, detail: "no chat_id")
            }
            return .chatUpdate(record)
        case "message_deleted":
            guard let chatID, let messageID = payload.omID("message_id") else {
                return .malformed(type: type, detail: "no chat_id or message_id")
            }
            return .messageDeleted(
                chatID: chatID, messageID: messageID,
                messagesV: versions.omInt("messages_v") ?? payload.omInt("messages_v"))
        case "chat_deleted":
            guard let chatID else { return .malformed(type: type, detail: "no chat_id") }
            return .chatDeleted(chatID: chatID)
        case "chat_pinned_updated":
            guard let chatID, let pinned = payload.omBool("pinned") ?? payload.omBool("is_pinned") else {
                return .malformed(type: type, detail: "no chat_id or pinned")
            }
            return .chatPinnedUpdated(chatID: chatID, pinned: pinned)
        case "chat_read_status_updated":
            guard let chatID else { return .malformed(type: type, detail: "no chat_id") }
            return .chatReadStatusUpdated(chatID: chatID, unreadCount: max(0, payload.omInt("unread_count") ?? 0))
        case "chat_draft_updated":
            guard let chatID else { return .malformed(type: type, detail: "no chat_id") }
            let data = payload["data"]?.objectValue ?? [:]
            return .chatDraftUpdated(
                chatID: chatID,
                encryptedDraft: data.omString("encrypted_draft_md") ?? payload.omString("encrypted_draft_md"),
                draftV: versions.omInt("draft_v") ?? payload.omInt("draft_v"))
        case _ where OpenMatesActionReply.names.contains(type):
            return .actionReply(OpenMatesActionReply(type: type, payload: payload))
        case "force_logout": return .forceLogout(reason: payload.omString("reason") ?? payload.omString("message"))
        case "error": return .error(message: payload.omString("message") ?? "error")
        case "ping": return .ping
        case "pong": return .pong
        default: return .unknown(type: type)
        }
    }
}

/// An answer the server sends only to the device that acted (the reference server's handlers at 1f6bb71).
public struct OpenMatesActionReply: Sendable, Hashable {
    /// The event types that are action replies.
    static let names: Set<String> = [
        "chat_message_confirmed", "encrypted_metadata_stored", "ai_task_initiated", "message_queued",
        "request_chat_history", "chat_key_mismatch", "incomplete_chat_metadata",
    ]
    /// The event type.
    public var type: String
    /// The chat it names, when it names one.
    public var chatID: String?
    /// The message it names (`message_id`, or `user_message_id` for `ai_task_initiated`), when it names one.
    public var messageID: String?
    /// `status` (`"synced"` when `chat_message_confirmed` answers a stored message).
    public var status: String?
    /// The server's words (`message`, else `reason`, else `code`), for a refusal's reason.
    public var message: String?

    /// Reads a reply's fields; absent ones stay nil.
    public init(type: String, payload: [String: JSONValue]) {
        self.type = type
        chatID = payload.omID("chat_id")
        messageID = payload.omID("message_id") ?? payload.omID("user_message_id")
        status = payload.omString("status")
        message = payload.omString("message") ?? payload.omString("reason") ?? payload.omString("code")
    }

    /// Whether it refuses the action it answers (`chat_key_mismatch`, `incomplete_chat_metadata`).
    public var isRefusal: Bool { type == "chat_key_mismatch" || type == "incomplete_chat_metadata" }
}
