import Foundation
import TidingsCore

/// The body of `POST /v1/sync/offline-prefetch`: which slice of the user's chats to send.
///
/// The cursor is an offset over all of the user's chats in the server's order, sub-chats included; the
/// server accepts 10…100 (the first 10 come with phase 1b) and a limit of 1…5. The initializer clamps to
/// those ranges, so the client never sends a request the server would refuse as invalid.
public struct OpenMatesPrefetchRequest: Sendable, Hashable {
    /// The offsets the server accepts.
    public static let cursorRange = 10...100
    /// The page sizes the server accepts.
    public static let limitRange = 1...5
    /// Where a pass starts: the chats before it came with phase 1b.
    public static let firstCursor = 10
    /// The path on the server's origin.
    public static let path = "/v1/sync/offline-prefetch"

    /// The offset of the first chat asked for.
    public var cursor: Int
    /// How many chats to send.
    public var limit: Int
    /// Whether embeds and embed keys come with the messages.
    public var includeEmbeds: Bool

    /// A request, with `cursor` and `limit` clamped to the ranges the server accepts.
    public init(cursor: Int = Self.firstCursor, limit: Int = 3, includeEmbeds: Bool = true) {
        self.cursor = min(max(cursor, Self.cursorRange.lowerBound), Self.cursorRange.upperBound)
        self.limit = min(max(limit, Self.limitRange.lowerBound), Self.limitRange.upperBound)
        self.includeEmbeds = includeEmbeds
    }

    /// The JSON body: `{"cursor": …, "limit": …, "include_embeds": …}`.
    public var json: JSONValue {
        ["cursor": .int(Int64(cursor)), "limit": .int(Int64(limit)), "include_embeds": .bool(includeEmbeds)]
    }

    /// ``json`` as UTF-8 bytes.
    public var body: Data { Data(json.jsonString(sortedKeys: true).utf8) }
}
