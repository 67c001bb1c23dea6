import TidingsCore

/// An action the user took that the server has not acknowledged yet: durable, replayed in order.
///
/// While it is pending, the local value it set wins over any server record (the version rules'
/// only exception).
public struct OpenMatesPendingAction: Sendable, Hashable {
    /// What an action does; its ``rawValue`` is the name stored in the queue (not a wire name: a message is
    /// stored and a chat hidden with the same event, `encrypted_chat_metadata`).
    public struct Kind: Sendable, Hashable, RawRepresentable, CustomStringConvertible {
        /// The stored name.
        public var rawValue: String
        /// Wraps a stored name (unknown names are kept, so a newer app's queue is not lost: replay fails them
        /// explicitly).
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Stores a user message durably (`encrypted_chat_metadata` with `message_id` and `encrypted_content`;
        /// idempotent by message ID; never starts the AI).
        public static let storeMessage = Kind(rawValue: "store_message")
        /// Asks the AI to answer a stored user message (`chat_message_added`, plaintext): sent at most once per
        /// message ID unless no acknowledgement came back.
        public static let askAI = Kind(rawValue: "ask_ai")
        /// Deletes a message (`delete_message` {chatId, messageId}).
        public static let deleteMessage = Kind(rawValue: "delete_message")
        /// Pins or unpins a chat (`update_chat` {chat_id, pinned}).
        public static let pin = Kind(rawValue: "pin")
        /// Hides or unhides a chat: its key re-wrapped (`encrypted_chat_metadata` with `allow_chat_key_rotation`).
        public static let hide = Kind(rawValue: "hide")
        /// The stored name.
        public var description: String { rawValue }

        /// Names older versions of the library queued, mapped when a queue is read (``migrated``).
        static let legacySendMessage = "send_message"
        static let legacyPinChat = "pin_chat"
        static let legacyHideChat = "hide_chat"
        /// Archiving does not exist on the reference server: a queued one is failed at replay, never sent.
        static let legacyArchiveChat = Kind(rawValue: "archive_chat")
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

    /// The payload key of a hide's chat key before it (kept on the device, never sent): what undoing restores
    /// when the server's details name no key.
    public static let keyBeforeKey = "local_key_before"
    /// The payload key of the value a flag action sets (kept on the device; the wire form differs per kind).
    public static let valueKey = "local_value"
    /// Payload keys kept on the device and never sent.
    static let localKeys: Set<String> = [valueBeforeKey, keyBeforeKey, valueKey]

    /// The message this action concerns, when it concerns one.
    public var messageID: String? { payload.omID("message_id") }

    /// The value a pin or hide sets.
    public var flagValue: Bool? {
        payload.omBool(Self.valueKey) ?? payload.omBool(kind == .pin ? "pinned" : "is_hidden")
    }

    /// A row queued by an older version, in today's kinds: `send_message` becomes ``Kind/storeMessage`` (its
    /// message's fields lifted into the payload), `pin_chat` ``Kind/pin``, `hide_chat` ``Kind/hide`` (without
    /// the re-wrapped key, which only the app's keys can make: replay fails it explicitly), and `archive_chat`
    /// stays as it is (replay fails it explicitly, undoing its local effect). Nothing queued is dropped.
    var migrated: OpenMatesPendingAction {
        var action = self
        switch kind.rawValue {
        case Kind.legacySendMessage:
            action.kind = .storeMessage
            for (key, value) in payload["message"]?.objectValue ?? [:] where action.payload[key] == nil {
                action.payload[key] = value
            }
            action.payload["message"] = nil
        case Kind.legacyPinChat:
            action.kind = .pin
            if let value = payload.omBool("pinned") { action.payload[Self.valueKey] = .bool(value) }
        case Kind.legacyHideChat:
            action.kind = .hide
            if let value = payload.omBool("is_hidden") { action.payload[Self.valueKey] = .bool(value) }
        default: break
        }
        return action
    }
}

/// Which local values pending actions back, per chat: the input of the version rules' exception.
public struct OpenMatesPendingBacking: Sendable, Hashable {
    /// Chats whose `pinned` a pending pin set.
    public var pinned: Set<String> = []
    /// Chats whose `hidden` and chat key a pending hide set.
    public var hidden: Set<String> = []
    /// Messages a pending store created (kept when server content replaces the chat's).
    public var sentMessageIDs: Set<String> = []
    /// Messages a pending `delete_message` removed (not brought back by server content).
    public var deletedMessageIDs: Set<String> = []

    /// Nothing pending.
    public init() {}

    /// The backing of a queue.
    public init(_ actions: [OpenMatesPendingAction]) {
        for action in actions {
            switch action.kind {
            case .pin: pinned.insert(action.chatID)
            case .hide: hidden.insert(action.chatID)
            case .storeMessage: if let id = action.messageID { sentMessageIDs.insert(id) }
            case .deleteMessage: if let id = action.messageID { deletedMessageIDs.insert(id) }
            default: break
            }
        }
    }
}
