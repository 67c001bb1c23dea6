import Foundation
import TidingsCore

/// One answer of `POST /v1/sync/offline-prefetch`, read leniently where one bad element can be dropped and
/// strictly where a wrong shape means the page cannot be trusted.
///
/// `chats` are flat database rows (`id` or `chat_id`, the versions as columns, `is_hidden`, …); the messages
/// come keyed by chat ID in `messages_by_chat_id` with their versions in `versions_by_chat_id`, as a content
/// batch carries them. The last page may say `done`, or `done` may come on an extra empty page.
public struct OpenMatesPrefetchPage: Sendable, Hashable {
    /// The largest body read; a larger one is refused before parsing.
    public static let maximumBodySize = 16 * 1024 * 1024
    /// The deepest JSON nesting accepted.
    public static let maximumDepth = 64

    /// The chats' metadata rows, in the server's order.
    public var chats: [OpenMatesChatRecord]
    /// Content for the chats that had messages or versions, by chat ID order.
    public var content: [OpenMatesChatContent]
    /// Embeds, embed keys and code-run outputs sent with the page.
    public var side: OpenMatesSideData
    /// The cursor of the next page, when the server stated one.
    public var nextCursor: Int?
    /// Whether the server has nothing after this page.
    public var done: Bool
    /// Rows and messages that were not usable (no ID, not an object) and were dropped.
    public var dropped: Int

    /// Creates a page.
    public init(
        chats: [OpenMatesChatRecord] = [], content: [OpenMatesChatContent] = [],
        side: OpenMatesSideData = OpenMatesSideData(), nextCursor: Int? = nil, done: Bool = false, dropped: Int = 0
    ) {
        self.chats = chats
        self.content = content
        self.side = side
        self.nextCursor = nextCursor
        self.done = done
        self.dropped = dropped
    }

    /// Reads a page from a response body.
    ///
    /// - Throws: ``OpenMatesPrefetchError/malformedPage`` when the body is larger than ``maximumBodySize``,
    ///   not JSON, nested deeper than ``maximumDepth``, not an object, has `chats`, `messages_by_chat_id` or
    ///   `versions_by_chat_id` of the wrong shape, a `done` that is not a boolean, a `next_cursor` that is not
    ///   a non-negative integer, or neither `done` nor `next_cursor`.
    public init(body: Data) throws(OpenMatesPrefetchError) {
        guard body.count <= Self.maximumBodySize else {
            throw .malformedPage("body of \(body.count) bytes is larger than \(Self.maximumBodySize)")
        }
        let json: JSONValue
        do { json = try JSONValue(parsing: body, maximumDepth: Self.maximumDepth) } catch {
            throw .malformedPage("not JSON: \(error)")
        }
        guard let members = json.objectValue else { throw .malformedPage("not an object") }
        try self.init(members: members)
    }

    init(members: [String: JSONValue]) throws(OpenMatesPrefetchError) {
        var dropped = 0
        let rows = try Self.field(members, "chats", \.arrayValue, "a list")
        var chats: [OpenMatesChatRecord] = []
        for row in rows ?? [] {
            if let members = row.objectValue, let record = OpenMatesChatRecord(entry: members) {
                chats.append(record)
            } else {
                dropped += 1
            }
        }
        let messages = try Self.field(members, "messages_by_chat_id", \.objectValue, "an object") ?? [:]
        let versions = try Self.field(members, "versions_by_chat_id", \.objectValue, "an object") ?? [:]
        let checkpoints = members["compression_checkpoints_by_chat_id"]?.objectValue ?? [:]
        var content: [OpenMatesChatContent] = []
        for chatID in Set(messages.keys).union(versions.keys).sorted() {
            let version = versions[chatID]?.objectValue ?? [:]
            var droppedMessages = 0
            content.append(
                OpenMatesChatContent(
                    chatID: chatID, messages: OpenMatesWireMessage.list(messages[chatID], dropped: &droppedMessages),
                    messagesV: version.omInt("messages_v"), serverMessageCount: version.omInt("server_message_count"),
                    compressionCheckpoints: checkpoints[chatID].flatMap { $0.isNull ? nil : $0 },
                    droppedMessages: droppedMessages))
            dropped += droppedMessages
        }
        let done = try Self.field(members, "done", \.boolValue, "a boolean")
        var nextCursor: Int?
        if let value = members["next_cursor"], !value.isNull {
            guard let number = value.intValue, number >= 0 else {
                throw .malformedPage("next_cursor is not a non-negative integer")
            }
            nextCursor = number
        }
        guard done != nil || nextCursor != nil else { throw .malformedPage("neither done nor next_cursor") }
        self.init(
            chats: chats, content: content, side: OpenMatesSideData(payload: members), nextCursor: nextCursor,
            done: done ?? false, dropped: dropped)
    }

    /// A field that must have one shape when present (JSON `null` reads as absent).
    private static func field<T>(
        _ members: [String: JSONValue], _ key: String, _ read: (JSONValue) -> T?, _ shape: String
    ) throws(OpenMatesPrefetchError) -> T? {
        guard let value = members[key], !value.isNull else { return nil }
        guard let typed = read(value) else { throw .malformedPage("\(key) is not \(shape)") }
        return typed
    }
}
