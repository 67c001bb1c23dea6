import TidingsCore

/// One chat's content as phase 1b, a phase 3 batch or a content batch answer carries it.
public struct OpenMatesChatContent: Sendable, Hashable {
    /// The chat's ID.
    public var chatID: String
    /// The messages; nil means "the client is up to date: keep what is local" (`messages: null`), which is
    /// not the same as `[]` (the chat has no messages).
    public var messages: [OpenMatesWireMessage]?
    /// The messages' version the content is at, when stated.
    public var messagesV: Int?
    /// How many messages the server holds for the chat: more than were sent means the content is partial.
    public var serverMessageCount: Int?
    /// The chat's compression checkpoints, kept as sent.
    public var compressionCheckpoints: JSONValue?
    /// Elements of `messages` that were not messages (dropped, counted for diagnostics).
    public var droppedMessages: Int

    /// Creates content.
    public init(
        chatID: String, messages: [OpenMatesWireMessage]?, messagesV: Int? = nil, serverMessageCount: Int? = nil,
        compressionCheckpoints: JSONValue? = nil, droppedMessages: Int = 0
    ) {
        self.chatID = chatID
        self.messages = messages
        self.messagesV = messagesV
        self.serverMessageCount = serverMessageCount
        self.compressionCheckpoints = compressionCheckpoints
        self.droppedMessages = droppedMessages
    }

    /// Reads a `{chat_id, messages, messages_v?, server_message_count?, compression_checkpoints?}` entry.
    init?(entry members: [String: JSONValue]) {
        let details = members["chat_details"]?.objectValue ?? [:]
        guard let id = members.omID("chat_id") ?? details.omID("chat_id") ?? details.omID("id") else { return nil }
        var dropped = 0
        self.init(
            chatID: id, messages: OpenMatesWireMessage.list(members["messages"], dropped: &dropped),
            messagesV: members.omInt("messages_v") ?? details.omInt("messages_v"),
            serverMessageCount: members.omInt("server_message_count"),
            compressionCheckpoints: members["compression_checkpoints"].flatMap { $0.isNull ? nil : $0 },
            droppedMessages: dropped)
    }
}

/// Embeds, embed keys and code-run outputs sent beside content (never in phase 2).
public struct OpenMatesSideData: Sendable, Hashable {
    /// Embed objects, each with an `embed_id`.
    public var embeds: [[String: JSONValue]]
    /// Embed key objects.
    public var embedKeys: [[String: JSONValue]]
    /// Code-run output objects.
    public var codeRunOutputs: [[String: JSONValue]]

    /// Creates side data.
    public init(
        embeds: [[String: JSONValue]] = [], embedKeys: [[String: JSONValue]] = [],
        codeRunOutputs: [[String: JSONValue]] = []
    ) {
        self.embeds = embeds
        self.embedKeys = embedKeys
        self.codeRunOutputs = codeRunOutputs
    }

    init(payload: [String: JSONValue]) {
        self.init(
            embeds: payload.omObjects("embeds"), embedKeys: payload.omObjects("embed_keys"),
            codeRunOutputs: payload.omObjects("code_run_outputs"))
    }

    /// Whether there is nothing.
    public var isEmpty: Bool { embeds.isEmpty && embedKeys.isEmpty && codeRunOutputs.isEmpty }
}
