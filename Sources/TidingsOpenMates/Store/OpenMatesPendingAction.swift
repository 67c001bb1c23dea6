import TidingsCore

/// An action the user took that the server has not acknowledged yet: durable, replayed in order.
///
/// While it is pending, the local value it set wins over any server record (the version rules'
/// only exception).
public struct OpenMatesPendingAction: Sendable, Hashable {
    /// The kinds of the public client's offline set.
    public struct Kind: Sendable, Hashable, RawRepresentable, CustomStringConvertible {
        /// The wire name (`send_message`, …).
        public var rawValue: String
        /// Wraps a wire name (unknown names are kept, so a newer app's queue is not lost).
        public init(rawValue: String) { self.rawValue = rawValue }
        /// `send_message`.
        public static let sendMessage = Kind(rawValue: "send_message")
        /// `delete_message`.
        public static let deleteMessage = Kind(rawValue: "delete_message")
        /// `pin_chat`.
        public static let pinChat = Kind(rawValue: "pin_chat")
        /// `archive_chat`.
        public static let archiveChat = Kind(rawValue: "archive_chat")
        /// `hide_chat`.
        public static let hideChat = Kind(rawValue: "hide_chat")
        /// The wire name.
        public var description: String { rawValue }
    }

    /// The queue position (increasing; replay order).
    public var id: Int64
    /// What to do.
    public var kind: Kind
    /// The chat it concerns.
    public var chatID: String
    /// The action's fields (`message_id`, `pinned`, …).
    public var payload: [String: JSONValue]
    /// How many times it was sent without success.
    public var tries: Int
    /// Why the last try failed, for the UI.
    public var lastError: String?

    /// Creates an action value (the store assigns ``id`` when it is enqueued).
    public init(
        id: Int64 = 0, kind: Kind, chatID: String, payload: [String: JSONValue] = [:], tries: Int = 0,
        lastError: String? = nil
    ) {
        self.id = id
        self.kind = kind
        self.chatID = chatID
        self.payload = payload
        self.tries = tries
        self.lastError = lastError
    }

    /// The payload key of a flag action's value before the first queued action on that flag (kept on the
    /// device, never sent): what undoing restores when the server never stated the flag.
    public static let valueBeforeKey = "local_value_before"

    /// The message this action concerns, when it concerns one.
    public var messageID: String? { payload.omID("message_id") }
}

/// Which local values pending actions back, per chat: the input of the version rules' exception.
public struct OpenMatesPendingBacking: Sendable, Hashable {
    /// Chats whose `pinned` a pending `pin_chat` set.
    public var pinned: Set<String> = []
    /// Chats whose `archived` a pending `archive_chat` set.
    public var archived: Set<String> = []
    /// Chats whose `hidden` a pending `hide_chat` set.
    public var hidden: Set<String> = []
    /// Messages a pending `send_message` created (kept when server content replaces the chat's).
    public var sentMessageIDs: Set<String> = []
    /// Messages a pending `delete_message` removed (not brought back by server content).
    public var deletedMessageIDs: Set<String> = []

    /// Nothing pending.
    public init() {}

    /// The backing of a queue.
    public init(_ actions: [OpenMatesPendingAction]) {
        for action in actions {
            switch action.kind {
            case .pinChat: pinned.insert(action.chatID)
            case .archiveChat: archived.insert(action.chatID)
            case .hideChat: hidden.insert(action.chatID)
            case .sendMessage: if let id = action.messageID { sentMessageIDs.insert(id) }
            case .deleteMessage: if let id = action.messageID { deletedMessageIDs.insert(id) }
            default: break
            }
        }
    }
}
