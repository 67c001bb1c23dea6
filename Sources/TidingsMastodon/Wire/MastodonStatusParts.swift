import Foundation
import TidingsCore

/// A media attachment of a status. Only `id` is required.
public struct MastodonMediaAttachment: Codable, Hashable, Sendable {
    /// The attachment's ID.
    public var id: ServerID
    /// Image, video, …; unknown kinds are kept.
    public var type: MastodonMediaType
    /// The full-size file; nil when missing or empty.
    public var url: URL?
    /// A small preview; nil when missing or empty.
    public var previewURL: URL?
    /// The alternative text.
    public var description: String?
    /// A BlurHash placeholder.
    public var blurhash: String?

    enum CodingKeys: String, CodingKey {
        case id, type, url, description, blurhash
        case previewURL = "preview_url"
    }

    /// Decodes leniently: only a missing `id` fails; a missing type is `.unknown("")`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(ServerID.self, forKey: .id)
        type = container.lenient(MastodonMediaType.self, .type) ?? .unknown("")
        url = container.url(.url)
        previewURL = container.url(.previewURL)
        description = container.lenient(String.self, .description)
        blurhash = container.lenient(String.self, .blurhash)
    }
}

/// An account mentioned in a status.
public struct MastodonMention: Codable, Hashable, Sendable {
    /// The mentioned account's ID.
    public var id: ServerID
    /// Its username.
    public var username: String
    /// Its `acct` (`user@domain` when remote).
    public var acct: String
    /// Its profile page.
    public var url: URL?

    enum CodingKeys: String, CodingKey { case id, username, acct, url }

    /// Decodes leniently: only a missing `id` fails.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(ServerID.self, forKey: .id)
        username = container.lenient(String.self, .username) ?? ""
        acct = container.lenient(String.self, .acct) ?? username
        url = container.url(.url)
    }
}

/// A poll attached to a status, with the reader's own vote.
public struct MastodonPoll: Codable, Hashable, Sendable {
    /// One choice of a poll.
    public struct Option: Codable, Hashable, Sendable {
        /// The choice's text.
        public var title: String
        /// Votes so far; nil when the server hides them until the poll ends.
        public var votesCount: Int?

        enum CodingKeys: String, CodingKey {
            case title
            case votesCount = "votes_count"
        }

        /// Decodes leniently: a missing title is empty.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            title = container.lenient(String.self, .title) ?? ""
            votesCount = container.lenient(Int.self, .votesCount)
        }
    }

    /// The poll's ID.
    public var id: ServerID
    /// When voting ends; nil for an open-ended poll.
    @MastodonDateCoding public var expiresAt: Date?
    /// Whether voting has ended.
    public var expired: Bool
    /// Whether several choices may be picked.
    public var multiple: Bool
    /// The choices, in order.
    public var options: [Option]
    /// Whether the reader voted; nil when the server did not say (no token).
    public var voted: Bool?
    /// The indices of the reader's choices.
    public var ownVotes: [Int]

    enum CodingKeys: String, CodingKey {
        case id, expired, multiple, options, voted
        case expiresAt = "expires_at"
        case ownVotes = "own_votes"
    }

    /// Decodes leniently: only a missing `id` fails.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(ServerID.self, forKey: .id)
        _expiresAt = container.date(.expiresAt)
        expired = container.lenient(Bool.self, .expired) ?? false
        multiple = container.lenient(Bool.self, .multiple) ?? false
        options = container.lossyArray(Option.self, .options)
        voted = container.lenient(Bool.self, .voted)
        ownVotes = container.lossyArray(Int.self, .ownVotes)
    }
}
