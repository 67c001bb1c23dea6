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

    /// Applies a new version of a status from the stream (`status.update`): every cached copy — its own row and
    /// the copy each cached boost embeds — is replaced in place in every timeline and marked edited, the
    /// reader's own state kept (``MastodonStatusPayload/keepingReaderState(old:new:)``: favourite, boost,
    /// bookmark, pin, mute, poll vote), then the effects of pending actions are put back.
    ///
    /// - Returns: Whether a cached copy was replaced.
    /// - Throws: a store error.
    @discardableResult
    public func applyEdit(_ status: MastodonStatus) throws -> Bool {
        let written = try writeNow { db in try self.writeNewVersion(status, keepingReaderState: true, in: db) }
        for id in written { broadcaster.publish(.statusUpdated(id)) }
        return !written.isEmpty
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

    /// Removes `ids` (deleted on the server) from the cache, with the cached boosts of each (a boost goes with
    /// the status it boosts on Mastodon), each with a tombstone so no page brings it back, and tells subscribers.
    public func removeDeleted(_ ids: [ServerID]) throws {
        guard !ids.isEmpty else { return }
        let removed = try writeNow { db -> [ServerID] in
            var removed: [ServerID] = []
            for id in ids {
                let boosts = try self.copies(of: id, in: db).filter { $0.id != id }.map(\.id)
                for target in [id] + boosts where !removed.contains(target) {
                    try self.store.delete(account: self.account, id: target, in: db)
                    removed.append(target)
                }
            }
            return removed
        }
        broadcaster.publish(.deleted(removed))
    }

    /// Writes the server's copy of a status into every cached copy of it (not an edit unless `edited_at` moved),
    /// keeping the effects of pending actions.
    func replaceFromServer(_ status: MastodonStatus) throws {
        let written = try writeNow { db in try self.writeNewVersion(status, keepingReaderState: false, in: db) }
        for id in written { broadcaster.publish(.statusUpdated(id)) }
    }

    /// Writes a new version of `status` into its own cached row and into every cached copy of the status it is
    /// (or, for a boost, boosts): the row of that status and the copy each cached boost embeds. With
    /// `keepingReaderState` (a stream's edit, which carries no reader's view) the reader's state of each old copy
    /// is kept; otherwise (an answer to the reader's token) the server's is written wherever it sends one, the
    /// old copy's where it sends null or nothing (a sparse server). A copy whose `edited_at`
    /// moved is marked edited. Then the pending actions' effects are put back on every copy. Returns the rows
    /// written.
    func writeNewVersion(
        _ status: MastodonStatus, keepingReaderState: Bool, in db: SQLiteConnection
    ) throws -> [ServerID] {
        let logical = status.reblog ?? status
        var written: [ServerID] = []
        func write(_ old: MastodonStatus, _ new: MastodonStatus) throws {
            // For a boost the merge reaches the status it embeds too.
            // The server's answer wins where it speaks; a sparse one (null flags) keeps what this device knew.
            let merged =
                keepingReaderState
                ? MastodonStatusPayload.keepingReaderState(old: old, new: new)
                : MastodonStatusPayload.fillingUnknownReaderState(old: old, new: new)
            // The stream's edit of a cached status is told even when nothing differs (it was edited).
            guard merged != old || (keepingReaderState && old.id == status.id) else { return }
            let payload = try MastodonStatusPayload.encode(merged)
            let edited =
                (keepingReaderState && old.id == status.id) || old.editedAt != merged.editedAt
                || old.reblog?.editedAt != merged.reblog?.editedAt
            if edited {
                try store.edit(account: account, id: old.id, payload: payload, in: db) { _, new in new }
            } else {
                try store.replacePayload(account: account, id: old.id, payload: payload, in: db)
            }
            written.append(old.id)
        }
        if let own = try cachedStatus(status.id, in: db) { try write(own, status) }
        for copy in try copies(of: logical.id, in: db) where copy.id != status.id {
            if copy.id == logical.id {
                try write(copy, logical)
            } else if copy.reblog?.id == logical.id {
                var boost = copy
                boost.reblog = logical
                try write(copy, boost)
            }
        }
        guard !written.isEmpty else { return [] }
        written += try reapplyPendingEffects(on: logical.id, in: db)
        return Array(Set(written)).sorted()
    }
}
