import Foundation
import TidingsCore

/// Optimistic actions: written at once with their effect and a durable outbox row in one transaction, sent
/// in order, reconciled with the server's answer, reverted with a reason when the server refuses them for
/// good, replayed after a restart.
extension MastodonAccountEngine {
    /// How many times a transient failure (5xx, 429, a drop) is retried before the action is reverted.
    public static let maximumActionAttempts = 5

    /// Applies `action` on `target` at once (the cached status shows it, or for a follow or unfollow the cached
    /// relationship, ``relationship(with:)``; marked pending), stores it in the outbox in the same transaction,
    /// then sends the outbox.
    ///
    /// - Returns: The pending action, or nil when the cached status or relationship already shows the action's
    ///   result (nothing to do).
    /// - Throws: a store error (nothing was written then). Server failures do not throw: they are reported as
    ///   ``MastodonEngineChange/actionFailed(_:reason:)`` or leave the action pending for a later replay.
    @discardableResult
    public func perform(_ action: MastodonAction, on target: ServerID) async throws -> MastodonPendingAction? {
        let written: (MastodonPendingAction, [ServerID])? = try writeNow { db in
            var updated: [ServerID] = []
            if action.targetsAccount {
                // The cached relationship shows the follow at once, written with its outbox row.
                guard try !self.relationshipAlreadyShows(action, on: target, in: db) else { return nil }
                let pending = try self.store.enqueue(action, target: target, account: self.account, in: db)
                try self.settleRelationship(target, confirmed: nil, in: db)
                return (pending, [])
            }
            if let cached = try self.cachedStatus(target, in: db) {
                guard Self.applying(action, to: cached) != cached else { return nil }
                // Every copy (the status's own row, each boost of it) shows the action, so an undo tapped on
                // any of them finds it.
                updated = try self.updateCopies(of: cached.reblog?.id ?? target, in: db) {
                    Self.applying(action, to: $0)
                }
            } else {
                updated = [target]
            }
            return (try self.store.enqueue(action, target: target, account: self.account, in: db), updated)
        }
        guard let (pending, updated) = written else { return nil }
        broadcaster.publish(.actionPending(pending))
        if action.targetsAccount { broadcaster.publish(.relationship(target)) }
        for id in updated { broadcaster.publish(.statusUpdated(id)) }
        await drainOutbox()
        return pending
    }

    /// The actions not yet confirmed by the server, oldest first.
    public func pendingActions() throws -> [MastodonPendingAction] {
        try readNow { db in try self.store.pendingActions(account: self.account, in: db) }
    }

    /// Whether an action on `target` is pending (the UI's pending flag).
    public func isPending(_ target: ServerID) throws -> Bool {
        try pendingActions().contains { $0.target == target }
    }

    /// How long an outbox waits before sending again after its `failures`-th transient failure in a row (a 5xx,
    /// a drop, a 429) while online: 30 s, doubling up to 15 minutes. ``MastodonSync`` retries the action outbox
    /// on it; TidingsPush's `NotificationReplyOutbox` its replies.
    public static func outboxRetryDelay(afterFailures failures: Int) -> Duration {
        let doublings = min(max(0, failures - 1), 5)
        return min(.seconds(30 * (1 << doublings)), .seconds(900))
    }

    /// Sends every pending action, oldest first (on launch, after a restart; when the network returns).
    /// Stops at the first transient failure so the order is kept; that action is retried on the next call.
    public func replayOutbox() async {
        await drainOutbox()
    }

    func drainOutbox() async {
        guard !outboxDraining else { return }
        outboxDraining = true
        defer { outboxDraining = false }
        while let next = (try? pendingActions())?.first {
            guard await send(next) else { return }
        }
    }

    /// Sends one action; returns whether the outbox may go on (the action was settled either way).
    func send(_ pending: MastodonPendingAction) async -> Bool {
        var updated = pending.action.targetsAccount ? [] : [pending.target]
        var relationshipChanged = false
        do {
            if let statusAction = pending.action.statusAction {
                let answer = try await guarded {
                    try await self.client.perform(statusAction, status: self.apiTarget(pending.target))
                }
                updated = try writeNow { db in
                    try self.store.removePending(pending.id, account: self.account, in: db)
                    // A boost's answer wraps the boosted status: that one carries the reader's new state.
                    let confirmed = Self.filling(
                        pending.action, into: pending.action == .reblog ? (answer.reblog ?? answer) : answer)
                    return try self.reconcile(pending.target, with: confirmed, in: db)
                }
            } else {
                let answer = try await guarded {
                    try await self.client.relationship(following: pending.action == .follow, account: pending.target)
                }
                relationshipChanged = try writeNow { db in
                    try self.store.removePending(pending.id, account: self.account, in: db)
                    return try self.settleRelationship(pending.target, confirmed: answer, in: db)
                }
            }
            outboxAttempts[pending.id] = nil
            broadcaster.publish(.actionConfirmed(pending))
            if relationshipChanged { broadcaster.publish(.relationship(pending.target)) }
            for id in updated { broadcaster.publish(.statusUpdated(id)) }
            return true
        } catch let error as MastodonError {
            switch error {
            case .notFound: return revert(pending, reason: .notFound, deleteTarget: true)
            case .badRequest, .conflict: return revert(pending, reason: .refused, deleteTarget: false)
            case .unauthorized, .needsReauthentication:
                return false  // kept: sent after the account signs in again
            default:
                let attempts = (outboxAttempts[pending.id] ?? 0) + 1
                outboxAttempts[pending.id] = attempts
                guard attempts >= Self.maximumActionAttempts else { return false }
                return revert(pending, reason: .gaveUp(attempts: attempts), deleteTarget: false)
            }
        } catch {
            // Cancellation or a store error: the action stays pending.
            return false
        }
    }

    /// Undoes the action's effect, drops it from the outbox and tells the UI why.
    func revert(_ pending: MastodonPendingAction, reason: MastodonActionFailure, deleteTarget: Bool) -> Bool {
        do {
            let (deleted, updated): ([ServerID], [ServerID]) = try writeNow { db in
                try self.store.removePending(pending.id, account: self.account, in: db)
                if pending.action.targetsAccount {
                    // Back to the server's last answer (with any other pending follow action over it); an account
                    // the server does not know has no relationship to show.
                    if deleteTarget {
                        try self.store.deleteRelationship(account: self.account, target: pending.target, in: db)
                    } else {
                        try self.settleRelationship(pending.target, confirmed: nil, in: db)
                    }
                    return ([], [])
                }
                let logical = try self.cachedStatus(pending.target, in: db)?.reblog?.id ?? pending.target
                if deleteTarget {
                    // The server has no such status: neither the cached row, the one it boosts, nor any other
                    // boost of that one stays.
                    let copies = try self.copies(of: logical, in: db).map(\.id)
                    var deleted: [ServerID] = []
                    for id in Set(copies + [logical, pending.target]).sorted() {
                        try self.store.delete(account: self.account, id: id, in: db)
                        deleted.append(id)
                    }
                    return (deleted, [])
                }
                let updated = try self.updateCopies(of: logical, in: db) {
                    Self.applying(pending.action.inverse, to: $0)
                }
                return ([], updated + (try self.reapplyPendingEffects(on: pending.target, in: db)))
            }
            outboxAttempts[pending.id] = nil
            broadcaster.publish(.actionFailed(pending, reason: reason))
            if pending.action.targetsAccount { broadcaster.publish(.relationship(pending.target)) }
            if !deleted.isEmpty { broadcaster.publish(.deleted(deleted)) }
            for id in Set(updated).sorted() { broadcaster.publish(.statusUpdated(id)) }
            return true
        } catch {
            return false
        }
    }

    /// Writes the server's view of the status (`confirmed`, the one `target` is or boosts) into every cached
    /// copy of it — keeping the copy's reader state where the answer leaves it out — then the effects of
    /// actions still pending on it; returns the rows it wrote.
    func reconcile(_ target: ServerID, with confirmed: MastodonStatus, in db: SQLiteConnection) throws -> [ServerID] {
        guard try store.status(account: account, id: target, in: db) != nil else { return [] }
        // A sparse answer (null flags) says nothing of the reader's other state: what the copy shows stays.
        let written = try updateCopies(of: confirmed.id, in: db) { copy in
            var status = copy
            if let inner = status.reblog, status.id != confirmed.id {
                // A boost: its boosted status is what was confirmed.
                status.reblog = MastodonStatusPayload.fillingUnknownReaderState(old: inner, new: confirmed)
            } else {
                status = MastodonStatusPayload.fillingUnknownReaderState(old: copy, new: confirmed)
            }
            return status
        }
        return written + (try reapplyPendingEffects(on: target, in: db))
    }

    /// Puts the effects of pending actions back over statuses a page or an answer replaced.
    func reapplyPendingEffects() throws {
        try writeNow { db in
            var done: Set<ServerID> = []
            for pending in try self.store.pendingActions(account: self.account, in: db) {
                let logical = try self.cachedStatus(pending.target, in: db)?.reblog?.id ?? pending.target
                guard done.insert(logical).inserted else { continue }
                _ = try self.reapplyPendingEffects(on: pending.target, in: db)
            }
        }
    }

    /// Applies the pending actions on the status `target` is or boosts — whichever copy they were taken
    /// through — to every cached copy of it; returns the rows it changed.
    @discardableResult
    func reapplyPendingEffects(on target: ServerID, in db: SQLiteConnection) throws -> [ServerID] {
        let logical = try cachedStatus(target, in: db)?.reblog?.id ?? target
        var actions: [MastodonAction] = []
        for pending in try store.pendingActions(account: account, in: db) where !pending.action.targetsAccount {
            let pendingLogical =
                pending.target == target
                ? logical : (try cachedStatus(pending.target, in: db)?.reblog?.id ?? pending.target)
            if pendingLogical == logical { actions.append(pending.action) }
        }
        guard !actions.isEmpty else { return [] }
        return try updateCopies(of: logical, in: db) { copy in
            actions.reduce(copy) { status, action in Self.applying(action, to: status) }
        }
    }

    /// Every cached copy of status `id`: its own row and each cached boost of it.
    func copies(of id: ServerID, in db: SQLiteConnection) throws -> [MastodonStatus] {
        try store.statusPayloads(account: account, mentioning: id, in: db).compactMap { row in
            let status = try MastodonStatusPayload.decode(row.payload)
            return status.id == id || status.reblog?.id == id ? status : nil
        }
    }

    /// Writes `transform` of every cached copy of status `id` that it changes; returns their row IDs.
    func updateCopies(
        of id: ServerID, in db: SQLiteConnection, _ transform: (MastodonStatus) -> MastodonStatus
    ) throws -> [ServerID] {
        var written: [ServerID] = []
        for copy in try copies(of: id, in: db) {
            let changed = transform(copy)
            guard changed != copy else { continue }
            try writeStatus(changed, in: db)
            written.append(copy.id)
        }
        return written
    }

    /// The cached status `target`, decoded (for a boost, ``applying(_:to:)`` changes the status it boosts).
    func cachedStatus(_ target: ServerID, in db: SQLiteConnection) throws -> MastodonStatus? {
        guard let stored = try store.status(account: account, id: target, in: db) else { return nil }
        return try MastodonStatusPayload.decode(stored.payload)
    }

    func writeStatus(_ status: MastodonStatus, in db: SQLiteConnection) throws {
        try store.replacePayload(
            account: account, id: status.id, payload: try MastodonStatusPayload.encode(status), in: db)
    }

    /// The ID the API is called with: a cached boost's action goes to the status it boosts.
    func apiTarget(_ target: ServerID) throws -> ServerID {
        try readNow { db in
            try self.cachedStatus(target, in: db)?.reblog?.id ?? target
        }
    }

    /// The server's answer to a confirmed `action`, with the action's field set when the answer leaves it
    /// out. Why: a server with sparse answers (Pleroma-style) omits the reader's state; written as it came, the
    /// cache would stop showing a confirmed action, and its undo would then be "nothing to do".
    static func filling(_ action: MastodonAction, into answer: MastodonStatus) -> MastodonStatus {
        var answer = answer
        switch action {
        case .favourite, .unfavourite: answer.favourited = answer.favourited ?? (action == .favourite)
        case .reblog, .unreblog: answer.reblogged = answer.reblogged ?? (action == .reblog)
        case .bookmark, .unbookmark: answer.bookmarked = answer.bookmarked ?? (action == .bookmark)
        case .mute, .unmute: answer.muted = answer.muted ?? (action == .mute)
        default: break
        }
        return answer
    }

    /// `status` with `action`'s effect on the reader's state (on the boosted status when it is a boost).
    static func applying(_ action: MastodonAction, to status: MastodonStatus) -> MastodonStatus {
        if var inner = status.reblog {
            inner = applying(action, to: inner)
            var outer = status
            outer.reblog = inner
            return outer
        }
        var status = status
        switch action {
        case .favourite where status.favourited != true:
            status.favourited = true
            status.favouritesCount += 1
        case .unfavourite where status.favourited == true:
            status.favourited = false
            status.favouritesCount = max(0, status.favouritesCount - 1)
        case .reblog where status.reblogged != true:
            status.reblogged = true
            status.reblogsCount += 1
        case .unreblog where status.reblogged == true:
            status.reblogged = false
            status.reblogsCount = max(0, status.reblogsCount - 1)
        case .bookmark: status.bookmarked = true
        case .unbookmark: status.bookmarked = false
        case .mute: status.muted = true
        case .unmute: status.muted = false
        default: break
        }
        return status
    }
}
