import Foundation
import TidingsCore

/// The reader's relationship with another account as the server tells it (`Relationship`, the answer of
/// `POST /api/v1/accounts/:id/follow` and `/unfollow`): only what the engine keeps.
public struct MastodonRelationship: Decodable, Hashable, Sendable {
    /// The other account.
    public var id: ServerID
    /// Whether the reader follows it.
    public var following: Bool
    /// Whether the reader asked to follow it and it has not answered yet (a locked account).
    public var requested: Bool

    enum CodingKeys: String, CodingKey { case id, following, requested }

    /// A relationship, e.g. to compare with the server's.
    public init(id: ServerID, following: Bool, requested: Bool) {
        self.id = id
        self.following = following
        self.requested = requested
    }

    /// Decodes leniently: only a missing `id` fails; a missing or null flag is false.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(ServerID.self, forKey: .id)
        following = container.lenient(Bool.self, .following) ?? false
        requested = container.lenient(Bool.self, .requested) ?? false
    }
}
