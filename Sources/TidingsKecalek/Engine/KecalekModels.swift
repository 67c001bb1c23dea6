import Foundation
import TidingsCore

/// A decrypted message as the cache stores it and the app shows it.
///
/// `readBy` is never stored: the client fills it from what it has seen since launch (responses and
/// `messages_read` notifications).
public struct KecalekMessage: Sendable, Hashable {
    /// The message's ID, unique within its conversation.
    public var messageID: String
    /// The conversation.
    public var conversationID: String
    /// Who sent it.
    public var senderID: String
    /// When the server accepted it, with the server's own text.
    public var createdAt: KecalekTimestamp
    /// The decrypted payload: a JSON object (`{"text": …}`, or one with `_control`).
    public var payload: Data
    /// Reactions, cached and updated by notifications.
    public var reactions: [KecalekReaction]
    /// Whether it is pinned, cached and updated by notifications.
    public var pinned: Bool
    /// Read receipts known in memory; empty when read from the cache alone.
    public var readBy: [KecalekReadReceipt]

    /// Creates a message.
    public init(
        messageID: String, conversationID: String, senderID: String, createdAt: KecalekTimestamp, payload: Data,
        reactions: [KecalekReaction] = [], pinned: Bool = false, readBy: [KecalekReadReceipt] = []
    ) {
        self.messageID = messageID
        self.conversationID = conversationID
        self.senderID = senderID
        self.createdAt = createdAt
        self.payload = payload
        self.reactions = reactions
        self.pinned = pinned
        self.readBy = readBy
    }

    /// The payload's `text`, when it has one.
    public var text: String? { (try? JSONValue(kecalekFrame: payload))?["text"]?.stringValue }

    /// Whether the payload is a control message (`_control`), which message lists leave out.
    public var isControl: Bool { Self.isControl(payload) }

    static func isControl(_ payload: Data) -> Bool {
        // A cheap scan first: most payloads are plain text messages.
        guard payload.range(of: Data("_control".utf8)) != nil else { return false }
        return (try? JSONValue(kecalekFrame: payload))?["_control"] != nil
    }
}

/// Why one message of a page was not applied; the rest of the page was.
public struct KecalekMessageIssue: Sendable, Hashable, CustomStringConvertible {
    /// The message ID when it could be read.
    public var messageID: String?
    /// The conversation.
    public var conversationID: String
    /// What was wrong.
    public var error: KecalekError

    /// Creates an issue record.
    public init(messageID: String?, conversationID: String, error: KecalekError) {
        self.messageID = messageID
        self.conversationID = conversationID
        self.error = error
    }

    public var description: String { "\(conversationID)/\(messageID ?? "?"): \(error)" }
}

/// One request of an operation and the bytes it moved (JSON text, without WebSocket framing).
public struct KecalekRequestRecord: Sendable, Hashable, CustomStringConvertible {
    /// The request type.
    public var type: String
    /// The `after_ts`/`since` sent, if any.
    public var since: String?
    /// The `offset` sent, if any.
    public var offset: Int?
    /// How many messages or IDs the response carried.
    public var itemCount: Int
    /// Bytes of the request frame.
    public var bytesSent: Int
    /// Bytes of the response frame (0 when none arrived).
    public var bytesReceived: Int
    /// The failure, when the request failed.
    public var failure: KecalekError?

    public var description: String {
        var text = type
        if let since { text += " since=\(since)" }
        if let offset, offset > 0 { text += " offset=\(offset)" }
        text += " → \(itemCount) items, ↑\(bytesSent) B ↓\(bytesReceived) B"
        if let failure { text += " (\(failure))" }
        return text
    }
}

/// What an operation moved over the wire.
public struct KecalekTraffic: Sendable, Hashable {
    /// Each request in order.
    public var requests: [KecalekRequestRecord] = []

    /// Creates an empty record.
    public init() {}

    /// All request bytes.
    public var bytesSent: Int { requests.reduce(0) { $0 + $1.bytesSent } }
    /// All response bytes.
    public var bytesReceived: Int { requests.reduce(0) { $0 + $1.bytesReceived } }
    /// Both directions.
    public var totalBytes: Int { bytesSent + bytesReceived }
}

/// The answer of ``KecalekClient/messages(conversation:limit:offset:)``.
public struct KecalekMessagePage: Sendable {
    /// How the page was obtained.
    public enum Source: Sendable, Hashable {
        /// Only messages after the newest cached one were fetched (`after_ts`), plus deletions.
        case incremental
        /// The page was fetched whole (empty cache, or `offset > 0`).
        case full
        /// The server could not be asked or failed; the cache answered.
        case cache(KecalekError)
        /// The server could not be asked and nothing was cached for this page.
        case unavailable(KecalekError)
    }

    /// The conversation.
    public var conversationID: String
    /// Messages in `created_at` order (oldest first), control payloads left out.
    public var messages: [KecalekMessage]
    /// How the page was obtained.
    public var source: Source
    /// The server's `total_count`, when it answered.
    public var totalCount: Int?
    /// IDs of messages that were not cached before this call.
    public var newMessageIDs: [String]
    /// IDs removed from the cache by this call.
    public var deletedMessageIDs: [String]
    /// IDs sent in `mark_read`.
    public var markedRead: [String]
    /// Messages skipped because they were malformed or did not decrypt.
    public var issues: [KecalekMessageIssue]
    /// What crossed the wire for this call.
    public var traffic: KecalekTraffic
    /// True when the server's answers could not prove that every message newer than the cache was
    /// fetched (it ignores `offset` and pages newest first, or the page limit ran out): the conversation is
    /// not marked current and the next sync asks again from the same point.
    public var gapRemains = false
}

/// A change the client made to the store or learned from the server, for apps to render.
public enum KecalekChange: Sendable, Hashable {
    /// The connection state changed.
    case connection(KecalekConnectionState)
    /// Messages were added to the cache.
    case messagesStored(conversationID: String, messageIDs: [String])
    /// Messages were removed from the cache.
    case messagesDeleted(conversationID: String, messageIDs: [String])
    /// A cached message's reactions changed.
    case reactionsChanged(conversationID: String, messageID: String, reactions: [KecalekReaction])
    /// A cached message was pinned or unpinned.
    case pinChanged(conversationID: String, messageID: String, pinned: Bool)
    /// Someone read messages (kept in memory only).
    case messagesRead(conversationID: String, userID: String, messageIDs: [String])
    /// A conversation was refreshed after a reconnect.
    case refreshed(conversationID: String, newMessageIDs: [String], deletedMessageIDs: [String])
    /// A message could not be applied.
    case issue(KecalekMessageIssue)
    /// This subscriber read too slowly and `count` changes were dropped from its buffer: what it shows may
    /// be stale, so it re-reads its state. The changes after this one are delivered as usual.
    case missedChanges(count: Int)
}

/// One subscriber's stream of ``KecalekChange``s (see ``KecalekClient/changes(bufferingLimit:)``).
public typealias KecalekChanges = ChangeSubscription<KecalekChange>

/// Whether the client has a live connection.
public enum KecalekConnectionState: Sendable, Hashable {
    /// Not connected and not trying.
    case disconnected
    /// Opening a connection (first time or after a loss).
    case connecting
    /// Connected: requests go out at once.
    case connected
}
