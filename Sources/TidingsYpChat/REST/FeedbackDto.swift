/// One entry of `GET api/feedback`.
///
/// Decoding is lenient: `id` may be a string or a number; `name` and `createdAt` may be absent;
/// an entry without `message` decodes with an empty one rather than failing the list.
public struct FeedbackDto: Codable, Sendable, Equatable, Identifiable {
    /// The entry's id (what `DELETE api/feedback/{id}` takes), as text.
    public var id: String
    /// The author's name, if given.
    public var name: String?
    /// The feedback text.
    public var message: String
    /// When it was written, as the server formats it.
    public var createdAt: String?

    /// A feedback entry.
    public init(id: String, name: String? = nil, message: String, createdAt: String? = nil) {
        self.id = id
        self.name = name
        self.message = message
        self.createdAt = createdAt
    }

    /// Decodes leniently (see the type's description).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyCodingKey.self)
        id = container.text("id", "_id") ?? ""
        name = container.text("name", "userName")
        message = container.text("message", "text") ?? ""
        createdAt = container.text("createdAt", "date")
    }

    /// Encodes as `{id, name?, message, createdAt?}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: AnyCodingKey.self)
        try container.encode(id, forKey: AnyCodingKey("id"))
        try container.encodeIfPresent(name, forKey: AnyCodingKey("name"))
        try container.encode(message, forKey: AnyCodingKey("message"))
        try container.encodeIfPresent(createdAt, forKey: AnyCodingKey("createdAt"))
    }
}

/// The body of `POST api/feedback`.
public struct FeedbackRequest: Codable, Sendable, Equatable {
    /// The author's name (optional on the server).
    public var name: String?
    /// The feedback text.
    public var message: String

    /// A feedback to send.
    public init(name: String? = nil, message: String) {
        self.name = name
        self.message = message
    }
}

/// The answer of `GET api/feedback/admin-status`, `admin-login` and `admin-logout`.
///
/// Decoding is lenient: `isAdmin` is also read as `admin`; absent means not an admin.
public struct FeedbackAdminStatusDto: Codable, Sendable, Equatable {
    /// Whether this cookie session is a feedback admin.
    public var isAdmin: Bool

    /// An admin status.
    public init(isAdmin: Bool) { self.isAdmin = isAdmin }

    /// Decodes leniently (see the type's description).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyCodingKey.self)
        isAdmin = container.flag("isAdmin", "admin") ?? false
    }

    /// Encodes as `{isAdmin}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: AnyCodingKey.self)
        try container.encode(isAdmin, forKey: AnyCodingKey("isAdmin"))
    }
}
