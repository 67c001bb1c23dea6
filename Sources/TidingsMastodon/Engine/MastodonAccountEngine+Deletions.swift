import Foundation
import TidingsCore

/// Deletions and edits the engine learns by asking again: a 404 on refetch, and the re-check of cached
/// visible statuses that finds what was deleted while the app was offline (Mastodon tells deletions only over
/// streaming).
extension MastodonAccountEngine {
    /// Fetches status `id` again: a 404 removes it and every entry pointing at it; otherwise the cached copy is
    /// replaced in place with the server's (pending actions' effects kept).
    ///
    /// - Returns: The server's status, or nil when it was deleted.
    /// - Throws: ``MastodonError`` other than ``MastodonError/notFound``, or a store error.
    @discardableResult
    public func refetchStatus(_ id: ServerID) async throws -> MastodonStatus? {
        do {
            let status = try await guarded { try await self.client.status(id: id) }
            try replaceFromServer(status)
            return status
        } catch let error as MastodonError where error == .notFound {
            try removeDeleted([id])
            return nil
        }
    }

    /// Applies a new version of a status from the server or the stream: replaced in place in every timeline,
    /// marked edited when it was edited, the reader's own state kept (``MastodonStatusPayload``).
    ///
    /// - Returns: Whether a cached status was replaced.
    /// - Throws: a store error.
    @discardableResult
    public func applyEdit(_ status: MastodonStatus) throws -> Bool {
        let replaced = try writeNow { db in
            let edited = try self.store.edit(
                account: self.account, id: status.id, payload: try MastodonStatusPayload.encode(status), in: db,
                merge: MastodonStatusPayload.mergeKeepingReaderState)
            if edited { try self.reapplyPendingEffects(on: status.id, in: db) }
            return edited
        }
        if replaced { broadcaster.publish(.statusUpdated(status.id)) }
        return replaced
    }

    /// Re-checks cached statuses and removes those the server no longer has.
    ///
    /// On Mastodon 4.3+ it asks `GET /api/v1/statuses?id[]=` in batches of 20 (each batch waits for the
    /// account's rate budget); on older servers it fetches one status at a time, a 404 meaning deleted.
    ///
    /// - Parameters:
    ///   - ids: The statuses to check; the newest `limit` cached in `timeline` when nil.
    ///   - timeline: Where to take the visible statuses from.
    ///   - limit: The most statuses checked in this call.
    /// - Returns: The statuses removed.
    /// - Throws: ``MastodonError`` (nothing learnt from the failing request is applied), or a store error.
    @discardableResult
    public func recheckCachedStatuses(
        _ ids: [ServerID]? = nil, timeline: String = MastodonTimelineKey.homeTimeline, limit: Int = 40
    ) async throws -> [ServerID] {
        let candidates = Array(
            (try ids ?? entries(timeline).reversed().compactMap(\.statusID)).prefix(max(0, limit)))
        guard !candidates.isEmpty else { return [] }
        let capabilities = try await capabilities()
        var deleted: [ServerID] = []
        if capabilities.supportsStatusesByID {
            let found = try await guarded { try await self.client.statuses(ids: candidates) }
            let alive = Set(found.map(\.id))
            deleted = candidates.filter { !alive.contains($0) }
            for status in found { try replaceFromServer(status) }
        } else {
            for id in candidates {
                do {
                    let status = try await guarded { try await self.client.status(id: id) }
                    try replaceFromServer(status)
                } catch let error as MastodonError where error == .notFound {
                    deleted.append(id)
                }
            }
        }
        try removeDeleted(deleted)
        return deleted
    }

    /// Removes `ids` (deleted on the server) from the cache and tells subscribers.
    public func removeDeleted(_ ids: [ServerID]) throws {
        guard !ids.isEmpty else { return }
        try writeNow { db in
            for id in ids { try self.store.delete(account: self.account, id: id, in: db) }
        }
        broadcaster.publish(.deleted(ids))
    }

    /// Writes the server's copy of a cached status (not an edit unless `edited_at` moved), keeping the effects of
    /// pending actions.
    func replaceFromServer(_ status: MastodonStatus) throws {
        let changed = try writeNow { db -> Bool in
            guard let stored = try self.store.status(account: self.account, id: status.id, in: db) else { return false }
            let old = try MastodonStatusPayload.decode(stored.payload)
            if old.editedAt != status.editedAt {
                try self.store.edit(
                    account: self.account, id: status.id, payload: try MastodonStatusPayload.encode(status), in: db
                ) { _, new in new }
            } else {
                try self.store.replacePayload(
                    account: self.account, id: status.id, payload: try MastodonStatusPayload.encode(status), in: db)
            }
            try self.reapplyPendingEffects(on: status.id, in: db)
            return true
        }
        if changed { broadcaster.publish(.statusUpdated(status.id)) }
    }
}
