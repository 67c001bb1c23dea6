import Foundation
import TidingsCore

/// Who the reader is: the account's own ID on its server, which tells a reply to the reader from a mention
/// (seed 002 §5: the `reply` category and its switch).
extension MastodonAccountEngine {
    /// The reader's own account ID when known — learned this session or kept with the account's record by an
    /// earlier sign-in — without asking the server; nil before ``learnReaderID()`` succeeded once.
    public var readerID: ServerID? {
        if let readerIDCache { return readerIDCache }
        let key = account
        let stored = try? readNow { db in try store.readerID(key: key, in: db) }
        readerIDCache = stored ?? nil
        return readerIDCache
    }

    /// The reader's own account ID: the one kept with the account's record, or else asked once
    /// (`GET /api/v1/accounts/verify_credentials`) and kept there (durably, beside the account's record in the
    /// store's signed-in accounts), so a relaunch does not ask again.
    ///
    /// - Returns: The ID.
    /// - Throws: ``MastodonError`` from the request (a refused token publishes
    ///   ``MastodonEngineChange/needsReauthentication``), or a store error.
    @discardableResult
    public func learnReaderID() async throws -> ServerID {
        if let known = readerID { return known }
        let me = try await guarded { try await self.client.verifyCredentials() }
        let key = account
        try writeNow { db in try store.saveReaderID(me.id, key: key, in: db) }
        readerIDCache = me.id
        return me.id
    }
}
