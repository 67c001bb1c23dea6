import Foundation
import TidingsCore

/// The reader's relationship with another account as the app shows it: the server's last answer with the
/// follow and unfollow actions still in the outbox over it.
public struct MastodonCachedRelationship: Sendable, Hashable {
    /// The other account.
    public var account: ServerID
    /// Whether the reader follows it (or, while pending, asked to).
    public var following: Bool
    /// Whether the reader's follow waits for the account to accept it (a locked account).
    public var requested: Bool
    /// Whether a follow or unfollow of it waits in the outbox (the UI's pending flag).
    public var pending: Bool
    /// The server's last answer; nil before one.
    public var confirmed: MastodonRelationship?
}

/// Follow and unfollow: the cached relationship is written in the transaction that writes the outbox row,
/// settled by the server's `Relationship`, and recomputed from the server's last answer when an action is
/// reverted.
extension MastodonAccountEngine {
    typealias RelationshipFlags = MastodonTimelineStore.RelationshipFlags

    /// The cached relationship with account `id`, or nil when the engine knows nothing of it (no follow action
    /// was taken or answered).
    ///
    /// - Throws: a store error.
    public func relationship(with id: ServerID) throws -> MastodonCachedRelationship? {
        try readNow { db in
            let row = try self.store.relationship(account: self.account, target: id, in: db)
            let pending = try self.pendingAccountActions(on: id, in: db)
            guard row != nil || !pending.isEmpty else { return nil }
            // Without a row (the disposable cache was rebuilt) the outbox still says what the reader did.
            let shown = row?.shown ?? Self.folding(pending, over: nil)
            return MastodonCachedRelationship(
                account: id, following: shown.following, requested: shown.requested, pending: !pending.isEmpty,
                confirmed: row?.server.map {
                    MastodonRelationship(id: id, following: $0.following, requested: $0.requested)
                })
        }
    }

    /// Whether `action` (a follow or unfollow) would change nothing the relationship already shows.
    func relationshipAlreadyShows(_ action: MastodonAction, on target: ServerID, in db: SQLiteConnection) throws
        -> Bool
    {
        guard let row = try store.relationship(account: account, target: target, in: db) else { return false }
        return Self.folding([action], over: row.shown) == row.shown
    }

    /// Writes what the relationship with `target` shows: the server's answer (`confirmed`, or the last one kept)
    /// with the pending follow actions over it. Returns whether the row changed.
    @discardableResult
    func settleRelationship(_ target: ServerID, confirmed: MastodonRelationship?, in db: SQLiteConnection) throws
        -> Bool
    {
        let old = try store.relationship(account: account, target: target, in: db)
        let server =
            confirmed.map { RelationshipFlags(following: $0.following, requested: $0.requested) } ?? old?.server
        let row = MastodonTimelineStore.RelationshipRow(
            shown: Self.folding(try pendingAccountActions(on: target, in: db), over: server), server: server)
        guard row != old else { return false }
        try store.writeRelationship(row, account: account, target: target, in: db)
        return true
    }

    func pendingAccountActions(on target: ServerID, in db: SQLiteConnection) throws -> [MastodonAction] {
        try store.pendingActions(account: account, in: db)
            .filter { $0.target == target && $0.action.targetsAccount }.map(\.action)
    }

    /// `actions` applied over `flags` (not following when nil). A follow shows as following until the server's
    /// answer says whether the account is locked (then `requested`); an unfollow also withdraws a request.
    static func folding(_ actions: [MastodonAction], over flags: RelationshipFlags?) -> RelationshipFlags {
        actions.reduce(flags ?? RelationshipFlags(following: false, requested: false)) { flags, action in
            switch action {
            case .follow where !flags.following && !flags.requested:
                RelationshipFlags(following: true, requested: false)
            case .unfollow: RelationshipFlags(following: false, requested: false)
            default: flags
            }
        }
    }
}
