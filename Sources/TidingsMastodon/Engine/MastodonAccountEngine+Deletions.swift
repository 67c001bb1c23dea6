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
    /// See ``recheck(_:timeline:limit:)``, which also says what was updated.
    ///
    /// - Returns: The statuses removed.
    /// - Throws: ``MastodonError`` (nothing learnt from the failing request is applied), or a store error.
    @discardableResult
    public func recheckCachedStatuses(
        _ ids: [ServerID]? = nil, timeline: String = MastodonTimelineKey.homeTimeline, limit: Int = 40
    ) async throws -> [ServerID] {
        try await recheck(ids, timeline: timeline, limit: limit).deleted
    }

    /// Re-checks cached statuses against the server, so edits and deletions made there reach the store:
    /// a status the server no longer has is removed (with its cached boosts, rule 3), every other cached copy
    /// gets the server's version in place, marked edited when its `edited_at` moved (rule 4).
    ///
    /// Where the server has `GET /api/v1/statuses?id[]=` (Mastodon 4.3+, ``MastodonCapabilities/supportsStatusesByID``)
    /// it asks in batches of 20; elsewhere, and from the first answer that shows the route missing (404, 405 or
    /// 400 from a compatible server naming a 4.3+ version), one status at a time, a 404 meaning deleted. Every
    /// request waits for the account's rate budget when the client has one.
    ///
    /// For example, after the server edited one cached status and deleted another:
    ///
    /// ```swift
    /// let report = try await engine.recheck(limit: 40)
    /// // report.deleted == [deletedID]; report.updated.contains(editedID)
    /// ```
    ///
    /// - Parameters:
    ///   - ids: The statuses to check; the newest `limit` cached in `timeline` when nil.
    ///   - timeline: Where to take the statuses from.
    ///   - limit: The most statuses checked in this call.
    /// - Returns: What was checked, removed and rewritten.
    /// - Throws: ``MastodonError`` (what the failing request would have told is not applied; statuses settled
    ///   before it stay settled), `CancellationError`, or a store error.
    @discardableResult
    public func recheck(
        _ ids: [ServerID]? = nil, timeline: String = MastodonTimelineKey.homeTimeline, limit: Int = 40
    ) async throws -> MastodonRecheckReport {
        let candidates = Array(
            (try ids ?? entries(timeline).reversed().compactMap(\.statusID)).prefix(max(0, limit)))
        var report = MastodonRecheckReport(checked: candidates)
        guard !candidates.isEmpty else { return report }
        let capabilities = try await capabilities()
        var found: [MastodonStatus]?
        if capabilities.supportsStatusesByID, !statusesByIDMissing {
            do {
                found = try await guarded { try await self.client.statuses(ids: candidates) }
                report.batched = true
            } catch let error as MastodonError where Self.showsRouteMissing(error) {
                statusesByIDMissing = true
            }
        }
        var deleted: [ServerID] = []
        if let found {
            let alive = Set(found.map(\.id))
            deleted = candidates.filter { !alive.contains($0) }
            for status in found { report.updated += try replaceFromServer(status) }
        } else {
            for id in candidates {
                do {
                    let status = try await guarded { try await self.client.status(id: id) }
                    report.updated += try replaceFromServer(status)
                } catch let error as MastodonError where error == .notFound {
                    deleted.append(id)
                }
            }
        }
        try removeDeleted(deleted)
        report.deleted = deleted
        report.updated = Array(Set(report.updated).subtracting(deleted)).sorted()
        return report
    }

    /// Whether an answer to `GET /api/v1/statuses?id[]=` says the server has no such route: Mastodon answers
    /// it with a list (a missing ID is left out, never a 404), so a 404, 405 or 400 comes from a server that
    /// only names a Mastodon version (GoToSocial's injected version, Pleroma's `ids[]`).
    static func showsRouteMissing(_ error: MastodonError) -> Bool {
        error == .notFound || error == .badRequest || (error == .server && error.status == 405)
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
    /// keeping the effects of pending actions; returns the rows written.
    @discardableResult
    func replaceFromServer(_ status: MastodonStatus) throws -> [ServerID] {
        let written = try writeNow { db in try self.writeNewVersion(status, keepingReaderState: false, in: db) }
        for id in written { broadcaster.publish(.statusUpdated(id)) }
        return written
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
