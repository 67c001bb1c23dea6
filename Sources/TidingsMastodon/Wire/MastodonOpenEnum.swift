/// `MastodonOpenEnum` is an enumeration of a string the server sends whose set of values grows with new
/// server versions: a value this version does not know decodes as `.unknown(value)` and encodes back
/// unchanged, so it is kept rather than failing the object.
public protocol MastodonOpenEnum: RawRepresentable<String>, Codable, Hashable, Sendable {
    /// The case for `rawValue`, `.unknown(rawValue)` when none matches.
    init(rawValue: String)
}

extension MastodonOpenEnum {
    /// Decodes a JSON string into a case; any string succeeds.
    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    /// Encodes the string the server sent.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// Who may see a status.
public enum MastodonVisibility: MastodonOpenEnum {
    /// Everyone, on public timelines.
    case `public`
    /// Everyone, but not on public timelines.
    case unlisted
    /// Followers only.
    case `private`
    /// The mentioned accounts only.
    case direct
    /// A value this version does not know (e.g. a server's `local`), kept as sent.
    case unknown(String)

    /// The case named by `rawValue`.
    public init(rawValue: String) {
        switch rawValue {
        case "public": self = .public
        case "unlisted": self = .unlisted
        case "private": self = .private
        case "direct": self = .direct
        default: self = .unknown(rawValue)
        }
    }

    /// The string the server sends.
    public var rawValue: String {
        switch self {
        case .public: "public"
        case .unlisted: "unlisted"
        case .private: "private"
        case .direct: "direct"
        case .unknown(let value): value
        }
    }
}

/// What happened in a notification (v1 `type`, v2 group `type`).
public enum MastodonNotificationType: MastodonOpenEnum {
    /// Someone mentioned the reader.
    case mention
    /// Someone the reader subscribed to posted.
    case status
    /// Someone boosted the reader's status.
    case reblog
    /// Someone followed the reader.
    case follow
    /// Someone asked to follow the reader.
    case followRequest
    /// Someone favourited the reader's status.
    case favourite
    /// A poll the reader voted in or made ended.
    case poll
    /// A status the reader interacted with was edited.
    case update
    /// Someone quoted the reader's status.
    case quote
    /// A status the reader quoted was edited.
    case quotedUpdate
    /// Someone signed up (moderators).
    case adminSignUp
    /// A new report (moderators).
    case adminReport
    /// Follow relationships were severed by a moderation action.
    case severedRelationships
    /// A moderator warned the reader.
    case moderationWarning
    /// A value this version does not know, kept as sent.
    case unknown(String)

    /// The case named by `rawValue`.
    public init(rawValue: String) {
        switch rawValue {
        case "mention": self = .mention
        case "status": self = .status
        case "reblog": self = .reblog
        case "follow": self = .follow
        case "follow_request": self = .followRequest
        case "favourite": self = .favourite
        case "poll": self = .poll
        case "update": self = .update
        case "quote": self = .quote
        case "quoted_update": self = .quotedUpdate
        case "admin.sign_up": self = .adminSignUp
        case "admin.report": self = .adminReport
        case "severed_relationships": self = .severedRelationships
        case "moderation_warning": self = .moderationWarning
        default: self = .unknown(rawValue)
        }
    }

    /// The string the server sends.
    public var rawValue: String {
        switch self {
        case .mention: "mention"
        case .status: "status"
        case .reblog: "reblog"
        case .follow: "follow"
        case .followRequest: "follow_request"
        case .favourite: "favourite"
        case .poll: "poll"
        case .update: "update"
        case .quote: "quote"
        case .quotedUpdate: "quoted_update"
        case .adminSignUp: "admin.sign_up"
        case .adminReport: "admin.report"
        case .severedRelationships: "severed_relationships"
        case .moderationWarning: "moderation_warning"
        case .unknown(let value): value
        }
    }
}

/// The kind of a media attachment.
public enum MastodonMediaType: MastodonOpenEnum {
    /// A still image.
    case image
    /// A looping, silent video.
    case gifv
    /// A video.
    case video
    /// An audio track.
    case audio
    /// `unknown` as the server sends it, or a value this version does not know.
    case unknown(String)

    /// The case named by `rawValue`.
    public init(rawValue: String) {
        switch rawValue {
        case "image": self = .image
        case "gifv": self = .gifv
        case "video": self = .video
        case "audio": self = .audio
        default: self = .unknown(rawValue)
        }
    }

    /// The string the server sends.
    public var rawValue: String {
        switch self {
        case .image: "image"
        case .gifv: "gifv"
        case .video: "video"
        case .audio: "audio"
        case .unknown(let value): value
        }
    }
}
