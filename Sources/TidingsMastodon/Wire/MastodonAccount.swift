import Foundation
import TidingsCore

/// A Mastodon account as the server describes it (`Account`, or the abbreviated form inside statuses and
/// notifications). Only `id` is required; every other field may be missing or null.
public struct MastodonAccount: Codable, Hashable, Sendable {
    /// The account's ID on this server.
    public var id: ServerID
    /// The local username (`Gargron`).
    public var username: String
    /// `username` for a local account, `username@domain` for a remote one.
    public var acct: String
    /// The display name; empty when unset.
    public var displayName: String
    /// The avatar's URL; nil when the server sent none or an empty string (no image).
    public var avatar: URL?
    /// The non-animated avatar's URL; nil as for ``avatar``.
    public var avatarStatic: URL?
    /// The profile page.
    public var url: URL?
    /// Whether the account marks itself as automated.
    public var bot: Bool
    /// Whether follows must be approved.
    public var locked: Bool
    /// When the account was created.
    @MastodonDateCoding public var createdAt: Date?

    enum CodingKeys: String, CodingKey {
        case id, username, acct, url, bot, locked, avatar
        case displayName = "display_name"
        case avatarStatic = "avatar_static"
        case createdAt = "created_at"
    }

    /// Decodes leniently: only a missing or unreadable `id` fails.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(ServerID.self, forKey: .id)
        username = container.lenient(String.self, .username) ?? ""
        acct = container.lenient(String.self, .acct) ?? username
        displayName = container.lenient(String.self, .displayName) ?? ""
        avatar = container.url(.avatar)
        avatarStatic = container.url(.avatarStatic)
        url = container.url(.url)
        bot = container.lenient(Bool.self, .bot) ?? false
        locked = container.lenient(Bool.self, .locked) ?? false
        _createdAt = container.date(.createdAt)
    }
}
