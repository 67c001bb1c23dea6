import Foundation
import TidingsCore

/// The client's local copy of decrypted messages, one row per (conversation, message ID).
///
/// Reads never see a half-applied write: ``write(_:)`` is one transaction. `read_by` is never
/// stored. Implementations: ``KecalekSQLiteCache`` (encrypted at rest) and ``KecalekMemoryCache``.
public protocol KecalekMessageCache: Sendable {
    /// Runs `body` in one transaction: every change it makes is applied, or none when it throws.
    ///
    /// - Throws: what `body` throws, or ``KecalekError/cache`` when the store fails.
    func write<T>(_ body: (any KecalekCacheWriter) throws -> T) throws -> T

    /// The newest `limit` messages of a conversation that are not control messages, oldest first.
    func newestMessages(conversationID: String, limit: Int) throws -> [KecalekMessage]

    /// The newest `created_at` in the conversation, control messages included; nil when empty.
    func newestTimestamp(conversationID: String) throws -> KecalekTimestamp?

    /// Where the last complete sync of the conversation left off; nil before the first one.
    ///
    /// Messages stored from notifications do not move it, so the next sync still asks for messages and
    /// deletions since this point.
    func syncState(conversationID: String) throws -> KecalekSyncState?

    /// Message IDs whose `mark_read` the server has not accepted yet, oldest first: the client sends them
    /// again with the next `mark_read` of the conversation. Durable: they survive a relaunch.
    func pendingReads(conversationID: String) throws -> [String]

    /// The rows of a conversation that cannot be read back (a damaged or tampered value), with the
    /// `created_at` each was stored with, oldest first: the client removes them and fetches them again
    /// instead of losing the whole conversation to one row.
    func damagedRows(conversationID: String) throws -> [KecalekDamagedRow]

    /// How many rows the conversation has, control messages included.
    func messageCount(conversationID: String) throws -> Int

    /// One cached message, or nil.
    func message(conversationID: String, messageID: String) throws -> KecalekMessage?

    /// Every cached conversation with its size and newest timestamp, by conversation ID.
    func conversations() throws -> [KecalekCachedConversation]

    /// Where the client runs so that its synchronous calls into this cache never block a thread of Swift's
    /// cooperative pool (a store's own queue); nil for a cache that never waits (in memory).
    var executor: SQLiteExecutor? { get }
}

extension KecalekMessageCache {
    /// A cache that never waits needs no executor of its own.
    public var executor: SQLiteExecutor? { nil }
}

/// The changes a cache transaction can make.
public protocol KecalekCacheWriter {
    /// Inserts or replaces a message; returns whether it was new.
    func upsert(_ message: KecalekMessage) throws -> Bool
    /// Removes messages; returns the IDs that were present.
    func delete(conversationID: String, messageIDs: [String]) throws -> [String]
    /// Replaces a cached message's reactions; returns false when the message is not cached.
    func setReactions(_ reactions: [KecalekReaction], conversationID: String, messageID: String) throws -> Bool
    /// Sets a cached message's pin; returns false when the message is not cached.
    func setPinned(_ pinned: Bool, conversationID: String, messageID: String) throws -> Bool
    /// Reads a message inside the transaction.
    func message(conversationID: String, messageID: String) throws -> KecalekMessage?
    /// Records where a complete sync left off (see ``KecalekMessageCache/syncState(conversationID:)``).
    func setSyncState(_ state: KecalekSyncState, conversationID: String) throws
    /// Adds message IDs to the conversation's pending `mark_read` set (see
    /// ``KecalekMessageCache/pendingReads(conversationID:)``); IDs already there stay once.
    func addPendingReads(_ messageIDs: [String], conversationID: String) throws
    /// Removes message IDs from the pending `mark_read` set (the server accepted them, or they are gone).
    func removePendingReads(_ messageIDs: [String], conversationID: String) throws
    /// Removes rows that ``KecalekMessageCache/damagedRows(conversationID:)`` reported.
    func deleteDamagedRows(_ rows: [KecalekDamagedRow], conversationID: String) throws
}

/// A cached row that cannot be read back.
///
/// The message's ID may be unknowable (a cache that keeps IDs only inside the sealed value cannot read it
/// from a damaged row), so the row is named by the cache's own ``storageKey``.
public struct KecalekDamagedRow: Sendable, Hashable {
    /// The message, when the cache can tell it without opening the value; nil otherwise.
    public var messageID: String?
    /// When the server created it, as stored next to the damaged value.
    public var createdAt: KecalekTimestamp
    /// What the cache finds the row by (opaque to the client).
    public var storageKey: [UInt8]

    /// Creates a damaged-row record.
    public init(messageID: String?, createdAt: KecalekTimestamp, storageKey: [UInt8]) {
        self.messageID = messageID
        self.createdAt = createdAt
        self.storageKey = storageKey
    }
}

/// Where a conversation's last complete sync left off.
public struct KecalekSyncState: Sendable, Hashable {
    /// The newest `created_at` the server had when the sync proved the cache current: the next sync asks
    /// for messages and deletions from one tick before it.
    public var point: KecalekTimestamp
    /// The largest page `get_messages` ever answered for this conversation: a shorter page cannot be
    /// the server's page-size cap, so it ends a listing without another request.
    public var largestPage: Int

    /// Creates a sync state.
    public init(point: KecalekTimestamp, largestPage: Int) {
        self.point = point
        self.largestPage = largestPage
    }
}

/// A summary row of ``KecalekMessageCache/conversations()``.
public struct KecalekCachedConversation: Sendable, Hashable {
    /// The conversation.
    public var conversationID: String
    /// Cached rows, control messages included.
    public var messageCount: Int
    /// The newest `created_at`.
    public var newest: KecalekTimestamp?

    /// Creates a summary row.
    public init(conversationID: String, messageCount: Int, newest: KecalekTimestamp?) {
        self.conversationID = conversationID
        self.messageCount = messageCount
        self.newest = newest
    }
}

/// A cache in memory, for tests and previews: same transaction guarantee, nothing on disk.
public final class KecalekMemoryCache: KecalekMessageCache, Sendable {
    private struct State {
        var conversationsByID: [String: [String: KecalekMessage]] = [:]
        var syncStates: [String: KecalekSyncState] = [:]
        var pending: [String: [String]] = [:]
        var failNextWrite = false
    }
    private let state = LockedState(State())

    /// Creates an empty cache.
    public init() {}

    /// Makes the next ``write(_:)`` fail after its body ran, as a full disk would (tests).
    public func failNextWriteForTesting() { state.withLock { locked in locked.failNextWrite = true } }

    /// Runs `body` in one transaction; see ``KecalekMessageCache/write(_:)``.
    public func write<T>(_ body: (any KecalekCacheWriter) throws -> T) throws -> T {
        try state.withLock { locked in
            let writer = Writer(locked.conversationsByID, syncStates: locked.syncStates, pending: locked.pending)
            let result = try body(writer)
            if locked.failNextWrite {
                locked.failNextWrite = false
                throw KecalekError(.cache, operation: "cache.write", detail: "injected failure")
            }
            locked.conversationsByID = writer.state
            locked.syncStates = writer.syncStates
            locked.pending = writer.pending
            return result
        }
    }

    /// The newest `limit` non-control messages, oldest first.
    public func newestMessages(conversationID: String, limit: Int) throws -> [KecalekMessage] {
        let rows = state.withLock { locked in locked.conversationsByID[conversationID].map { Array($0.values) } ?? [] }
        let sorted = rows.filter { !$0.isControl }.sorted(by: Self.order)
        return Array(sorted.suffix(max(0, limit)))
    }

    /// The newest `created_at`, control messages included.
    public func newestTimestamp(conversationID: String) throws -> KecalekTimestamp? {
        state.withLock { locked in locked.conversationsByID[conversationID]?.values.map(\.createdAt).max() }
    }

    /// Where the last complete sync left off; see ``KecalekMessageCache/syncState(conversationID:)``.
    public func syncState(conversationID: String) throws -> KecalekSyncState? {
        state.withLock { locked in locked.syncStates[conversationID] }
    }

    /// The pending `mark_read` IDs; see ``KecalekMessageCache/pendingReads(conversationID:)``.
    public func pendingReads(conversationID: String) throws -> [String] {
        state.withLock { locked in locked.pending[conversationID] ?? [] }
    }

    /// Always empty: rows in memory cannot be damaged.
    public func damagedRows(conversationID: String) throws -> [KecalekDamagedRow] { [] }

    /// The number of cached rows of the conversation.
    public func messageCount(conversationID: String) throws -> Int {
        state.withLock { locked in locked.conversationsByID[conversationID]?.count ?? 0 }
    }

    /// One cached message, or nil.
    public func message(conversationID: String, messageID: String) throws -> KecalekMessage? {
        state.withLock { locked in locked.conversationsByID[conversationID]?[messageID] }
    }

    /// Every cached conversation, by ID.
    public func conversations() throws -> [KecalekCachedConversation] {
        state.withLock { locked in
            locked.conversationsByID.filter { !$0.value.isEmpty }.map {
                KecalekCachedConversation(
                    conversationID: $0.key, messageCount: $0.value.count, newest: $0.value.values.map(\.createdAt).max()
                )
            }
        }.sorted { $0.conversationID < $1.conversationID }
    }

    /// `created_at`, then message ID, so equal timestamps still have one order.
    static func order(_ lhs: KecalekMessage, _ rhs: KecalekMessage) -> Bool {
        lhs.createdAt == rhs.createdAt ? lhs.messageID < rhs.messageID : lhs.createdAt < rhs.createdAt
    }

    private final class Writer: KecalekCacheWriter {
        var state: [String: [String: KecalekMessage]]
        var syncStates: [String: KecalekSyncState]
        var pending: [String: [String]]
        init(
            _ state: [String: [String: KecalekMessage]], syncStates: [String: KecalekSyncState],
            pending: [String: [String]]
        ) {
            self.state = state
            self.syncStates = syncStates
            self.pending = pending
        }

        func addPendingReads(_ messageIDs: [String], conversationID: String) throws {
            for id in messageIDs where pending[conversationID]?.contains(id) != true {
                pending[conversationID, default: []].append(id)
            }
        }

        func removePendingReads(_ messageIDs: [String], conversationID: String) throws {
            let gone = Set(messageIDs)
            pending[conversationID]?.removeAll { gone.contains($0) }
        }

        func setSyncState(_ syncState: KecalekSyncState, conversationID: String) throws {
            syncStates[conversationID] = syncState
        }

        /// Nothing to do: rows in memory are never damaged.
        func deleteDamagedRows(_ rows: [KecalekDamagedRow], conversationID: String) throws {}

        func upsert(_ message: KecalekMessage) throws -> Bool {
            var stored = message
            stored.readBy = []
            return state[message.conversationID, default: [:]].updateValue(stored, forKey: message.messageID) == nil
        }

        func delete(conversationID: String, messageIDs: [String]) throws -> [String] {
            messageIDs.filter { state[conversationID]?.removeValue(forKey: $0) != nil }
        }

        func setReactions(_ reactions: [KecalekReaction], conversationID: String, messageID: String) throws -> Bool {
            guard state[conversationID]?[messageID] != nil else { return false }
            state[conversationID]?[messageID]?.reactions = reactions
            return true
        }

        func setPinned(_ pinned: Bool, conversationID: String, messageID: String) throws -> Bool {
            guard state[conversationID]?[messageID] != nil else { return false }
            state[conversationID]?[messageID]?.pinned = pinned
            return true
        }

        func message(conversationID: String, messageID: String) throws -> KecalekMessage? {
            state[conversationID]?[messageID]
        }
    }
}
