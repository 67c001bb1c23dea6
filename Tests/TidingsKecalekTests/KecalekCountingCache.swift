import Foundation
import TidingsCore
import TidingsKecalek

/// A cache that forwards to another and counts, per write transaction, how many messages it upserted: the
/// paged-sync tests read from it whether a sync wrote page by page or all at once.
final class CountingCache: KecalekMessageCache, Sendable {
    private let base: any KecalekMessageCache
    private let upsertsPerWriteIncludingNone = LockedState<[Int]>([])

    init(_ base: any KecalekMessageCache) { self.base = base }

    /// For every write transaction that upserted at least one message, how many it upserted, in order.
    var upsertsPerWrite: [Int] { upsertsPerWriteIncludingNone.withLock { counts in counts.filter { $0 > 0 } } }

    func write<T>(_ body: (any KecalekCacheWriter) throws -> T) throws -> T {
        var upserts = 0
        defer { upsertsPerWriteIncludingNone.withLock { counts in counts.append(upserts) } }
        return try base.write { writer in
            try body(CountingWriter(base: writer, upserts: { upserts += 1 }))
        }
    }

    func newestMessages(conversationID: String, limit: Int) throws -> [KecalekMessage] {
        try base.newestMessages(conversationID: conversationID, limit: limit)
    }
    func newestTimestamp(conversationID: String) throws -> KecalekTimestamp? {
        try base.newestTimestamp(conversationID: conversationID)
    }
    func syncState(conversationID: String) throws -> KecalekSyncState? {
        try base.syncState(conversationID: conversationID)
    }
    func pendingReads(conversationID: String) throws -> [String] {
        try base.pendingReads(conversationID: conversationID)
    }
    func damagedRows(conversationID: String) throws -> [KecalekDamagedRow] {
        try base.damagedRows(conversationID: conversationID)
    }
    func messageCount(conversationID: String) throws -> Int { try base.messageCount(conversationID: conversationID) }
    func message(conversationID: String, messageID: String) throws -> KecalekMessage? {
        try base.message(conversationID: conversationID, messageID: messageID)
    }
    func conversations() throws -> [KecalekCachedConversation] { try base.conversations() }
    var executor: SQLiteExecutor? { base.executor }
}

private struct CountingWriter: KecalekCacheWriter {
    let base: any KecalekCacheWriter
    let upserts: () -> Void

    func upsert(_ message: KecalekMessage) throws -> Bool {
        upserts()
        return try base.upsert(message)
    }
    func delete(conversationID: String, messageIDs: [String]) throws -> [String] {
        try base.delete(conversationID: conversationID, messageIDs: messageIDs)
    }
    func setReactions(_ reactions: [KecalekReaction], conversationID: String, messageID: String) throws -> Bool {
        try base.setReactions(reactions, conversationID: conversationID, messageID: messageID)
    }
    func setPinned(_ pinned: Bool, conversationID: String, messageID: String) throws -> Bool {
        try base.setPinned(pinned, conversationID: conversationID, messageID: messageID)
    }
    func message(conversationID: String, messageID: String) throws -> KecalekMessage? {
        try base.message(conversationID: conversationID, messageID: messageID)
    }
    func setSyncState(_ state: KecalekSyncState, conversationID: String) throws {
        try base.setSyncState(state, conversationID: conversationID)
    }
    func addPendingReads(_ messageIDs: [String], conversationID: String) throws {
        try base.addPendingReads(messageIDs, conversationID: conversationID)
    }
    func removePendingReads(_ messageIDs: [String], conversationID: String) throws {
        try base.removePendingReads(messageIDs, conversationID: conversationID)
    }
    func deleteDamagedRows(_ rows: [KecalekDamagedRow], conversationID: String) throws {
        try base.deleteDamagedRows(rows, conversationID: conversationID)
    }
}

/// Wraps a transport and ends the connection in front of the `n`th response of a type (1 for the first),
/// as a killed app or a lost network would between two pages of a sync: that response never arrives.
final class ResponseCuttingTransport: KecalekTransport, Sendable {
    private struct State {
        var seen = 0
        var cut = false
    }
    private let state = LockedState(State())
    private let base: any KecalekTransport
    private let type: String
    private let ordinal: Int

    init(_ base: any KecalekTransport, before ordinal: Int, of type: String) {
        self.base = base
        self.type = type
        self.ordinal = ordinal
    }

    /// Whether the connection was cut.
    var cut: Bool { state.withLock { locked in locked.cut } }

    func connect() async throws -> KecalekChannel {
        let channel = try await base.connect()
        let (stream, continuation) = AsyncThrowingStream<Data, any Error>.makeStream(bufferingPolicy: .unbounded)
        Task {
            do {
                for try await frame in channel.inbound {
                    if cuts(frame) {
                        continuation.finish(throwing: KecalekError.connectionLost)
                        await channel.close()
                        return
                    }
                    continuation.yield(frame)
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        return KecalekChannel(inbound: stream, send: channel.send, close: channel.close)
    }

    private func cuts(_ frame: Data) -> Bool {
        guard case .response(let response)? = try? KecalekInbound(frame: frame), response.type == type else {
            return false
        }
        return state.withLock { locked in
            locked.seen += 1
            guard locked.seen == ordinal else { return false }
            locked.cut = true
            return true
        }
    }
}
