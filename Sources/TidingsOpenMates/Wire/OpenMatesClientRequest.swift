import TidingsCore

/// What the client tells the server about its local state in every `phased_sync_request`.
public struct OpenMatesClientState: Sendable, Hashable {
    /// Versions per chat the client stores.
    public var chatVersions: [String: OpenMatesChatVersions]
    /// The chats the client stores (sorted on the wire).
    public var chatIDs: [String]
    /// How many new-chat suggestions the client stores.
    public var suggestionsCount: Int
    /// The embeds the client stores.
    public var embedIDs: [String]

    /// Creates a state.
    public init(
        chatVersions: [String: OpenMatesChatVersions] = [:], chatIDs: [String] = [], suggestionsCount: Int = 0,
        embedIDs: [String] = []
    ) {
        self.chatVersions = chatVersions
        self.chatIDs = chatIDs
        self.suggestionsCount = suggestionsCount
        self.embedIDs = embedIDs
    }
}

/// The requests the client sends; each builds its envelope in one place, so there is one path per request.
public enum OpenMatesClientRequest: Sendable, Hashable {
    /// `phased_sync_request` with the phase (`all` at startup and after reconnects) and the full client state.
    case phasedSync(phase: String, state: OpenMatesClientState)
    /// `request_chat_content_batch` {chat_ids}.
    case contentBatch(chatIDs: [String])
    /// `sync_status_request` (cold cache probe).
    case syncStatus
    /// App-level `ping`.
    case ping
    /// App-level `pong` (answer to the server's ping).
    case pong
    /// A queued offline action, replayed as the reference server's event for its kind (commit 1f6bb71):
    /// ``OpenMatesPendingAction/Kind/storeMessage`` and ``OpenMatesPendingAction/Kind/hide`` as
    /// `encrypted_chat_metadata`, ``OpenMatesPendingAction/Kind/askAI`` as `chat_message_added` (the message
    /// nested under `message`), ``OpenMatesPendingAction/Kind/deleteMessage`` as `delete_message` {chatId,
    /// messageId}, ``OpenMatesPendingAction/Kind/pin`` as `update_chat` {chat_id, pinned}. Payload keys kept on
    /// the device (a flag's value before, a hide's key before) are never sent; nothing names a queue position,
    /// since no server event would carry it back.
    case action(OpenMatesPendingAction)

    /// The envelope to send.
    public var envelope: OpenMatesEnvelope {
        switch self {
        case .phasedSync(let phase, let state):
            var versions: [String: JSONValue] = [:]
            for (id, version) in state.chatVersions { versions[id] = version.json }
            return OpenMatesEnvelope(
                type: "phased_sync_request",
                payload: [
                    "phase": .string(phase),
                    "client_chat_versions": .object(versions),
                    "client_chat_ids": .array(state.chatIDs.sorted().map(JSONValue.string)),
                    "client_suggestions_count": .int(Int64(state.suggestionsCount)),
                    "client_embed_ids": .array(state.embedIDs.sorted().map(JSONValue.string)),
                ])
        case .contentBatch(let chatIDs):
            return OpenMatesEnvelope(
                type: "request_chat_content_batch", payload: ["chat_ids": .array(chatIDs.map(JSONValue.string))])
        case .syncStatus: return OpenMatesEnvelope(type: "sync_status_request")
        case .ping: return OpenMatesEnvelope(type: "ping")
        case .pong: return OpenMatesEnvelope(type: "pong")
        case .action(let action): return Self.actionEnvelope(action)
        }
    }
}

extension OpenMatesClientRequest {
    /// The wire event of each kind; nil for a kind the reference server has no event for.
    public static func eventType(of kind: OpenMatesPendingAction.Kind) -> String? {
        switch kind {
        case .storeMessage, .hide: "encrypted_chat_metadata"
        case .askAI: "chat_message_added"
        case .deleteMessage: "delete_message"
        case .pin: "update_chat"
        default: nil
        }
    }

    static func actionEnvelope(_ action: OpenMatesPendingAction) -> OpenMatesEnvelope {
        var payload = action.payload.filter { !OpenMatesPendingAction.localKeys.contains($0.key) }
        switch action.kind {
        case .deleteMessage:
            payload = ["chatId": .string(action.chatID), "messageId": payload["message_id"] ?? .null]
        case .askAI:
            var message: [String: JSONValue] = ["role": .string("user")]
            for key in ["message_id", "content", "created_at", "chat_has_title", "current_chat_title"] {
                message[key] = payload.removeValue(forKey: key)
            }
            payload["role"] = nil
            payload["message"] = .object(message)
            payload["is_incognito"] = payload["is_incognito"] ?? .bool(false)
            payload["chat_id"] = .string(action.chatID)
        case .hide:
            payload["allow_chat_key_rotation"] = .bool(true)
            payload["chat_key_rotation_reason"] = .string("hidden_chat")
            payload["is_hidden"] = nil
            payload["chat_id"] = .string(action.chatID)
        case .storeMessage:
            payload["role"] = nil
            payload["chat_id"] = .string(action.chatID)
        default: payload["chat_id"] = .string(action.chatID)
        }
        return OpenMatesEnvelope(type: eventType(of: action.kind) ?? action.kind.rawValue, payload: payload)
    }
}
