/// The answer of `GET api/session`: whether the cookie's session is logged in, and its express
/// session id (what `setSessionId` sends over the socket).
///
/// Decoding is lenient: every field is optional, `sessionId` is also read as `expressSessionId`,
/// `userName` also as `username`; an unknown field is ignored.
public struct SessionDto: Codable, Sendable, Equatable {
    /// Whether the session belongs to a logged-in user (false when absent).
    public var loggedIn: Bool
    /// The logged-in user's name, if any.
    public var userName: String?
    /// The express session id of this cookie session, if the server sent it.
    public var sessionId: String?

    /// A session value.
    public init(loggedIn: Bool = false, userName: String? = nil, sessionId: String? = nil) {
        self.loggedIn = loggedIn
        self.userName = userName
        self.sessionId = sessionId
    }

    /// Decodes leniently (see the type's description).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyCodingKey.self)
        userName = container.text("userName", "username")
        loggedIn = container.flag("loggedIn", "isLoggedIn") ?? (userName != nil)
        sessionId = container.text("sessionId", "expressSessionId")
    }

    /// Encodes as `{loggedIn, userName?, sessionId?}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: AnyCodingKey.self)
        try container.encode(loggedIn, forKey: AnyCodingKey("loggedIn"))
        try container.encodeIfPresent(userName, forKey: AnyCodingKey("userName"))
        try container.encodeIfPresent(sessionId, forKey: AnyCodingKey("sessionId"))
    }
}
