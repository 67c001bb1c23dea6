/// One content request on the wire: its chats, and a serial that tells a stale timeout from the current one.
struct OpenMatesContentRequest: Sendable, Hashable {
    let serial: Int
    let chatIDs: [String]
}

/// The stored chats a sync could not account for, while the engine asks the server about them.
///
/// Phase 2's `total_chat_count` below the stored chats means some stored chat is gone, but not which: only a
/// content answer that leaves a requested chat out says that. The chats wait here in the order they are to
/// be asked for; each answer resolves its request's chats (present, failed or deleted). Verification stops
/// early once the store holds no more chats than the server reported.
struct OpenMatesChatVerification: Sendable, Hashable {
    /// Not asked for yet, in order.
    private(set) var queue: [String] = []
    /// Queued or in flight, not resolved yet.
    private(set) var unresolved: Set<String> = []
    /// The server's `total_chat_count` that started it.
    private(set) var serverTotal: Int?

    /// Whether chats are still being verified.
    var isRunning: Bool { !unresolved.isEmpty }

    /// Adds `chatIDs` (those not already waiting) against the server's total.
    mutating func start(_ chatIDs: [String], serverTotal total: Int) {
        serverTotal = total
        for chatID in chatIDs where unresolved.insert(chatID).inserted { queue.append(chatID) }
    }

    /// Takes up to `limit` queued chats, leaving out `excluded` (already asked for by other means).
    mutating func take(_ limit: Int, excluding excluded: Set<String>) -> [String] {
        let taken = Array(queue.lazy.filter { !excluded.contains($0) }.prefix(max(0, limit)))
        let set = Set(taken)
        queue.removeAll { set.contains($0) }
        return taken
    }

    /// These chats were answered for (or deleted by any signal).
    mutating func resolve(_ chatIDs: some Sequence<String>) {
        unresolved.subtract(chatIDs)
        queue.removeAll { !unresolved.contains($0) }
    }

    /// Ends the verification; returns how many chats were left unverified.
    mutating func end() -> Int {
        let left = unresolved.count
        self = OpenMatesChatVerification()
        return left
    }
}
