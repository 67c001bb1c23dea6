import TidingsCore

extension OpenMatesStore {
    /// Where the next prefetch request starts: the stored cursor, or the first one when none is stored (a new,
    /// reset or erased store).
    ///
    /// - Throws: `StoreError` from SQLite.
    public func prefetchCursor() throws -> Int {
        try database.read { db in
            try db.fetchOne(Int.self, "SELECT value FROM om_prefetch_state WHERE name = 'cursor'")
        } ?? OpenMatesPrefetchRequest.firstCursor
    }

    /// Applies a page's changes (then keeps the chat window, as ``apply(_:)`` does) and stores the cursor in the
    /// same transaction, so a page and the cursor past it are stored together or not at all; nil resets it.
    func applyPrefetchPage(_ changes: [OpenMatesStoreChange], cursor: Int?) throws {
        try database.write { db in
            for change in changes { try Self.apply(change, db, sealing) }
            if !changes.isEmpty { try Self.evict(db, keep: maximumChats) }
            if let cursor {
                try db.execute(
                    "INSERT OR REPLACE INTO om_prefetch_state(name, value) VALUES ('cursor', ?)", [Int64(cursor)])
            } else {
                try db.execute("DELETE FROM om_prefetch_state WHERE name = 'cursor'")
            }
        }
    }

    /// Resets the cursor (logout, a finished pass).
    func resetPrefetchCursor() throws {
        try database.write { db in try db.execute("DELETE FROM om_prefetch_state WHERE name = 'cursor'") }
    }
}
