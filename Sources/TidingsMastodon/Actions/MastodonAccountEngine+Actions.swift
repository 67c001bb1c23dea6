import Foundation
import TidingsCore

/// Optimistic actions: written at once with their effect and a durable outbox row in one transaction, sent
/// in order, reconciled with the server's answer, reverted with a reason when the server refuses them for
/// good, replayed after a restart.
extension MastodonAccountEngine {
    /// How many times a transient failure (5xx, 429, a drop) is retried before the action is reverted.
    public static let maximumActionAttempts = 5

    /// Applies `action` on `target` at once (the cached status shows it, marked pending), stores it in the
    /// outbox in the same transaction, then sends the outbox.
    ///
    /// - Returns: The pending action, or nil when the cached status already shows the action's result
    ///   (nothing to do).
    /// - Throws: a store error (nothing was written then). Server failures do not throw: they are reported as
    ///   ``MastodonEngineChange/actionFailed(_:reason:)`` or leave the action pending for a later replay.
    @discardableResult
    public func perform(_ action: MastodonAction, on target: ServerID) async throws -> MastodonPendingAction? {
        let pending: MastodonPendingAction? = try writeNow { db in
            if !action.targetsAccount {
                guard let cached = try self.cachedStatus(target, in: db) else {
                    return try self.store.enqueue(action, target: target, account: self.account, in: db)
                }
                let patched = Self.applying(action, to: cached)
                guard patched != cached else { return nil }
                try self.writeStatus(patched, in: db)
            }
            return try self.store.enqueue(action, target: target, account: self.account, in: db)
        }
        guard let pending else { return nil }
        broadcaster.publish(.actionPending(pending))
        if !action.targetsAccount { broadcaster.publish(.statusUpdated(target)) }
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
        do {
            if let statusAction = pending.action.statusAction {
                let answer = try await guarded {
                    try await self.client.perform(statusAction, status: self.apiTarget(pending.target))
                }
                try writeNow { db in
                    try self.store.removePending(pending.id, account: self.account, in: db)
                    // A boost's answer wraps the boosted status: that one carries the reader's new state.
                    let confirmed = Self.filling(
                        pending.action, into: pending.action == .reblog ? (answer.reblog ?? answer) : answer)
                    try self.reconcile(pending.target, with: confirmed, in: db)
                }
            } else {
                _ = try await guarded {
                    try await self.client.setFollowing(pending.action == .follow, account: pending.target)
                }
                try writeNow { db in
                    try self.store.removePending(pending.id, account: self.account, in: db)
                }
            }
            outboxAttempts[pending.id] = nil
            broadcaster.publish(.actionConfirmed(pending))
            if !pending.action.targetsAccount { broadcaster.publish(.statusUpdated(pending.target)) }
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
            let deleted: Bool = try writeNow { db in
                try self.store.removePending(pending.id, account: self.account, in: db)
                if pending.action.targetsAccount { return false }
                if deleteTarget {
                    // The server has no such status: neither the cached one nor the one it boosts stays.
                    if let inner = try self.cachedStatus(pending.target, in: db)?.reblog?.id {
                        try self.store.delete(account: self.account, id: inner, in: db)
                    }
                    try self.store.delete(account: self.account, id: pending.target, in: db)
                    return true
                }
                if let cached = try self.cachedStatus(pending.target, in: db) {
                    try self.writeStatus(Self.applying(pending.action.inverse, to: cached), in: db)
                    try self.reapplyPendingEffects(on: pending.target, in: db)
                }
                return false
            }
            outboxAttempts[pending.id] = nil
            broadcaster.publish(.actionFailed(pending, reason: reason))
            if deleted { broadcaster.publish(.deleted([pending.target])) }
            if !pending.action.targetsAccount && !deleted { broadcaster.publish(.statusUpdated(pending.target)) }
            return true
        } catch {
            return false
        }
    }

    /// Writes the server's view of `target` into the cache, then the effects of actions still pending on it.
    func reconcile(_ target: ServerID, with confirmed: MastodonStatus, in db: SQLiteConnection) throws {
        guard let stored = try store.status(account: account, id: target, in: db) else { return }
        var status = try MastodonStatusPayload.decode(stored.payload)
        if status.reblog != nil, status.id != confirmed.id {
            status.reblog = confirmed  // the cached row is a boost: its boosted status is what was confirmed
        } else {
            status = confirmed
        }
        try store.replacePayload(
            account: account, id: target, payload: try MastodonStatusPayload.encode(status), in: db)
        try reapplyPendingEffects(on: target, in: db)
    }

    /// Puts the effects of pending actions back over statuses a page or an answer replaced.
    func reapplyPendingEffects() throws {
        try writeNow { db in
            let targets = Set(try self.store.pendingActions(account: self.account, in: db).map(\.target))
            for target in targets { try self.reapplyPendingEffects(on: target, in: db) }
        }
    }

    func reapplyPendingEffects(on target: ServerID, in db: SQLiteConnection) throws {
        let actions = try store.pendingActions(account: account, in: db).filter {
            $0.target == target && !$0.action.targetsAccount
        }
        guard !actions.isEmpty, var status = try cachedStatus(target, in: db) else { return }
        let original = status
        for pending in actions { status = Self.applying(pending.action, to: status) }
        if status != original { try writeStatus(status, in: db) }
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
        default: break
        }
        return status
    }
}
