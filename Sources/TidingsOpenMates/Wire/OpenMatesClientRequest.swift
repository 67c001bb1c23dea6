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
    /// A queued offline action, replayed as the live event of its kind (`send_message`, `pin_chat`, …) with its
    /// fields, `chat_id` and `client_action_id` (the queue position, so a refusal can name it); `delete_message`
    /// also names the chat and message as `chatId` and `messageId`, the names the public server's handler reads.
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
        case .action(let action):
            var payload = action.payload
            payload[OpenMatesPendingAction.valueBeforeKey] = nil
            payload["chat_id"] = .string(action.chatID)
            payload["client_action_id"] = .string(String(action.id))
            if action.kind == .deleteMessage {
                payload["chatId"] = .string(action.chatID)
                payload["messageId"] = payload["message_id"]
            }
            return OpenMatesEnvelope(type: action.kind.rawValue, payload: payload)
        }
    }
}
