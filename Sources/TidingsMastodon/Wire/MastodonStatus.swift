import Foundation
import TidingsCore

/// A status (a post) as a Mastodon-API server sends it, with the reader's own state (favourited,
/// reblogged, bookmarked, pinned, muted) when the request carried a token.
///
/// Only `id` is required: every other field may be missing or null, lists skip malformed elements, and
/// unknown visibilities are kept. A boost carries the boosted status in ``reblog``.
public struct MastodonStatus: Codable, Hashable, Sendable {
    /// The status's ID (a `ServerID`: ordered by length, then lexicographically).
    public var id: ServerID
    /// The ActivityPub URI.
    public var uri: String?
    /// The HTML page of the status.
    public var url: URL?
    /// When it was posted.
    @MastodonDateCoding public var createdAt: Date?
    /// When it was last edited; nil when never.
    @MastodonDateCoding public var editedAt: Date?
    /// The author; nil only when the server abbreviated it away.
    public var account: MastodonAccount?
    /// The HTML content.
    public var content: String
    /// The content warning; empty when none.
    public var spoilerText: String
    /// Whether the media is marked sensitive.
    public var sensitive: Bool
    /// Who may see it; nil when the server did not say.
    public var visibility: MastodonVisibility?
    /// The language code, when known.
    public var language: String?
    /// The status this one replies to.
    public var inReplyToID: ServerID?
    /// The author of the status this one replies to.
    public var inReplyToAccountID: ServerID?
    /// Attached media, malformed ones skipped.
    public var mediaAttachments: [MastodonMediaAttachment]
    /// Mentioned accounts, malformed ones skipped.
    public var mentions: [MastodonMention]
    /// The attached poll.
    public var poll: MastodonPoll?
    /// Counters as the server last reported them.
    public var repliesCount: Int
    /// Boost count.
    public var reblogsCount: Int
    /// Favourite count.
    public var favouritesCount: Int
    /// Whether the reader favourited it; nil when unknown (no token).
    public var favourited: Bool?
    /// Whether the reader boosted it.
    public var reblogged: Bool?
    /// Whether the reader bookmarked it.
    public var bookmarked: Bool?
    /// Whether the reader pinned it (own statuses only).
    public var pinned: Bool?
    /// Whether the reader muted its conversation.
    public var muted: Bool?
    /// The reader's v2 filters that matched it in the request's context (Mastodon 4); empty when none, on
    /// servers without v2 filters, and without a token. See ``hiddenByFilter`` and ``filterWarnings``.
    public var filtered: [MastodonFilterResult] = []
    private var reblogBox: Box?

    /// The boosted status when this one is a boost.
    public var reblog: MastodonStatus? {
        get { reblogBox?.status }
        set { reblogBox = newValue.map(Box.init) }
    }

    /// Boxes the boosted status: a struct cannot hold itself inline.
    final class Box: Codable, Hashable, Sendable {
        let status: MastodonStatus
        init(_ status: MastodonStatus) { self.status = status }
        required init(from decoder: any Decoder) throws { status = try MastodonStatus(from: decoder) }
        func encode(to encoder: any Encoder) throws { try status.encode(to: encoder) }
        static func == (lhs: Box, rhs: Box) -> Bool { lhs.status == rhs.status }
        func hash(into hasher: inout Hasher) { hasher.combine(status) }
    }

    enum CodingKeys: String, CodingKey {
        case id, uri, url, account, content, sensitive, visibility, language, mentions, poll
        case favourited, reblogged, bookmarked, pinned, muted, filtered
        case createdAt = "created_at"
        case editedAt = "edited_at"
        case spoilerText = "spoiler_text"
        case inReplyToID = "in_reply_to_id"
        case inReplyToAccountID = "in_reply_to_account_id"
        case mediaAttachments = "media_attachments"
        case repliesCount = "replies_count"
        case reblogsCount = "reblogs_count"
        case favouritesCount = "favourites_count"
        case reblogBox = "reblog"
    }

    /// Decodes leniently: only a missing or unreadable `id` fails the status.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(ServerID.self, forKey: .id)
        uri = container.lenient(String.self, .uri)
        url = container.url(.url)
        _createdAt = container.date(.createdAt)
        _editedAt = container.date(.editedAt)
        account = container.lenient(MastodonAccount.self, .account)
        content = container.lenient(String.self, .content) ?? ""
        spoilerText = container.lenient(String.self, .spoilerText) ?? ""
        sensitive = container.lenient(Bool.self, .sensitive) ?? false
        visibility = container.lenient(MastodonVisibility.self, .visibility)
        language = container.lenient(String.self, .language)
        inReplyToID = container.lenient(ServerID.self, .inReplyToID)
        inReplyToAccountID = container.lenient(ServerID.self, .inReplyToAccountID)
        mediaAttachments = container.lossyArray(MastodonMediaAttachment.self, .mediaAttachments)
        mentions = container.lossyArray(MastodonMention.self, .mentions)
        poll = container.lenient(MastodonPoll.self, .poll)
        repliesCount = container.lenient(Int.self, .repliesCount) ?? 0
        reblogsCount = container.lenient(Int.self, .reblogsCount) ?? 0
        favouritesCount = container.lenient(Int.self, .favouritesCount) ?? 0
        favourited = container.lenient(Bool.self, .favourited)
        reblogged = container.lenient(Bool.self, .reblogged)
        bookmarked = container.lenient(Bool.self, .bookmarked)
        pinned = container.lenient(Bool.self, .pinned)
        muted = container.lenient(Bool.self, .muted)
        filtered = container.lossyArray(MastodonFilterResult.self, .filtered)
        reblogBox = container.lenient(Box.self, .reblogBox)
    }
}
