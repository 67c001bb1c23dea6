import Foundation
import TidingsCore

/// The cached relationships of an account with other accounts (`mastodon_relationships`): what is shown and
/// the server's last answer, written in the transactions of the follow actions.
extension MastodonTimelineStore {
    /// Following and requested, as shown or as the server said.
    struct RelationshipFlags: Equatable {
        var following: Bool
        var requested: Bool
    }

    /// One cached row: what the app shows and, once the server answered, what it said.
    struct RelationshipRow: Equatable {
        var shown: RelationshipFlags
        var server: RelationshipFlags?
    }

    func relationship(account: String, target: ServerID, in db: SQLiteConnection) throws -> RelationshipRow? {
        try db.fetchOne(
            """
            SELECT following, requested, server_following, server_requested FROM \(MastodonTimelineSchema.relationships)
            WHERE account = ? AND target_id = ?
            """, [account, target.rawValue]
        ) { row in
            let serverFollowing: Bool? = try row[2]
            let serverRequested: Bool? = try row[3]
            return RelationshipRow(
                shown: RelationshipFlags(following: try row[0], requested: try row[1]),
                server: serverFollowing.map { RelationshipFlags(following: $0, requested: serverRequested ?? false) })
        }
    }

    func writeRelationship(
        _ relationship: RelationshipRow, account: String, target: ServerID, in db: SQLiteConnection
    ) throws {
        try db.execute(
            """
            INSERT INTO \(MastodonTimelineSchema.relationships)
                (account, target_id, following, requested, server_following, server_requested, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(account, target_id) DO UPDATE SET following = excluded.following,
                requested = excluded.requested, server_following = excluded.server_following,
                server_requested = excluded.server_requested, updated_at = excluded.updated_at
            """,
            [
                account, target.rawValue, relationship.shown.following, relationship.shown.requested,
                relationship.server?.following, relationship.server?.requested, nowMillis,
            ])
    }

    func deleteRelationship(account: String, target: ServerID, in db: SQLiteConnection) throws {
        try db.execute(
            "DELETE FROM \(MastodonTimelineSchema.relationships) WHERE account = ? AND target_id = ?",
            [account, target.rawValue])
    }
}
