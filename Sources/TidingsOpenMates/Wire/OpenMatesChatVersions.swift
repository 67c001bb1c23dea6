import TidingsCore

/// A chat's three component versions; the server increments each when that component changes.
public struct OpenMatesChatVersions: Sendable, Hashable, Codable {
    /// The messages' version.
    public var messagesV: Int
    /// The title's version.
    public var titleV: Int
    /// The user's draft's version.
    public var draftV: Int

    /// Creates versions (all 0 by default: nothing known).
    public init(messagesV: Int = 0, titleV: Int = 0, draftV: Int = 0) {
        self.messagesV = messagesV
        self.titleV = titleV
        self.draftV = draftV
    }

    /// The wire form inside `client_chat_versions`: `{messages_v, title_v, draft_v}`.
    public var json: JSONValue {
        ["messages_v": .int(Int64(messagesV)), "title_v": .int(Int64(titleV)), "draft_v": .int(Int64(draftV))]
    }
}
