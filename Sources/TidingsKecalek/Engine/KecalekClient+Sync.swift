import Foundation
import TidingsCore

extension KecalekClient {
    /// The newest `limit` messages of a conversation (offset 0), or an older page (`offset > 0`),
    /// following the incremental-sync document exactly.
    ///
    /// - With a non-empty cache and offset 0: `get_messages` with `after_ts` from the sync point (paged until
    ///   the answers prove the end), each page stored as it arrives, then `get_deleted_since` from the same
    ///   point; the deletions and the new sync point are written in one more transaction, and the answer is
    ///   the newest `limit` cached messages. A listing cut off by its page budget moves the point to what it
    ///   fetched contiguously (when the server answers oldest first), so the next sync continues from there;
    ///   ``KecalekMessagePage/gapRemains`` stays true until one completes.
    /// - With an empty cache or `offset > 0`: a full `get_messages` whose messages also go to the cache.
    /// - Offline or on a server error (timeout, error status, lost connection) with offset 0: the cache
    ///   answers and ``KecalekMessagePage/source`` says why; nothing is written.
    /// - `mark_read` is sent only for fetched messages others sent that the user has not read, never empty;
    ///   in an incremental sync only for those the answer shows or that are newer than the sync point.
    ///
    /// Control payloads never appear in ``KecalekMessagePage/messages``. This method does not throw:
    /// failures are reported in the page (``KecalekMessagePage/source``, ``KecalekMessagePage/issues``).
    ///
    /// For example:
    ///
    /// ```swift
    /// let page = await client.messages(conversation: "general", limit: 50)
    /// print(page.source, page.traffic.totalBytes)
    /// ```
    public func messages(conversation conversationID: String, limit: Int = 50, offset: Int = 0) async
        -> KecalekMessagePage
    {
        let limit = max(1, limit)
        let offset = max(0, offset)
        if offset == 0 { noteOpened(conversationID) }
        // Callers asking for the same page while it is being fetched share that fetch: one set of
        // requests, one `mark_read`. At offset 0 the limit only decides how much of the cache the answer
        // shows, so a running sync with at least this limit serves every caller; a smaller one is waited
        // for, and the sync after it finds nothing new to mark read.
        let key = SharedSyncKey(conversationID: conversationID, limit: offset == 0 ? 0 : limit, offset: offset)
        while let running = sharedSyncs[key] {
            if running.limit >= limit {
                let page = await running.task.value
                return offset == 0 ? page.showing(limit) : page
            }
            _ = await running.task.value
            // Finished: its caller forgets it when it resumes, which may be after this one. Forgotten here too,
            // or this loop would await the finished task again and again without letting that caller run.
            if sharedSyncs[key]?.task == running.task { sharedSyncs[key] = nil }
        }
        let task = Task { await self.trackedSync(conversationID, limit: limit, offset: offset) }
        sharedSyncs[key] = SharedSync(limit: limit, task: task)
        let page = await task.value
        // Only this fetch's entry: a larger caller may have started its own meanwhile.
        if sharedSyncs[key]?.task == task { sharedSyncs[key] = nil }
        return page
    }

    /// Stops refreshing a conversation on reconnect (the app closed its screen); opening it again resumes.
    public func closeConversation(_ conversationID: String) {
        openConversations.removeAll { $0 == conversationID }
    }

    /// Moves `conversationID` to the most recently opened end, keeping at most
    /// ``Configuration/maximumOpenConversations``.
    private func noteOpened(_ conversationID: String) {
        openConversations.removeAll { $0 == conversationID }
        openConversations.append(conversationID)
        let excess = openConversations.count - max(1, configuration.maximumOpenConversations)
        if excess > 0 { openConversations.removeFirst(excess) }
    }

    private func trackedSync(_ conversationID: String, limit: Int, offset: Int) async -> KecalekMessagePage {
        await tracked(conversationID) { await self.sync(conversationID, limit: limit, offset: offset) }
    }

    /// Runs `body` counted as a sync of the conversation: notifications that arrive meanwhile are
    /// held back (new messages) or remembered (deletions) until the last sync of it ends.
    private func tracked<T>(_ conversationID: String, _ body: () async -> T) async -> T {
        syncsInFlight[conversationID, default: 0] += 1
        let result = await body()
        syncsInFlight[conversationID, default: 1] -= 1
        if syncsInFlight[conversationID] == 0 {
            syncsInFlight[conversationID] = nil
            let deleted = deletedDuringSync.removeValue(forKey: conversationID) ?? []
            bufferedNewMessages[conversationID]?.removeAll { deleted.contains($0.messageID) }
            // Before the changes announced during the sync are forgotten: a buffered message gets them too.
            flushBufferedMessages(conversationID)
            changedDuringSync[conversationID] = nil
        }
        return result
    }

    private func sync(_ conversationID: String, limit: Int, offset: Int) async -> KecalekMessagePage {
        var since: KecalekTimestamp?
        // Repairing means fetching the rows again, which needs the server: offline, the cache answers as it is
        // (and an open from the cache reads its page once, not twice).
        if offset == 0, connectionState == .connected { repairDamagedRows(conversationID, limit: limit) }
        if offset == 0 {
            do {
                // The point of the last complete sync, not the newest row: a row stored from a `new_message`
                // notification must not make the sync skip deletions or messages before it.
                let state = try cache.syncState(conversationID: conversationID)
                largestPageSeen = max(largestPageSeen, state?.largestPage ?? 0)
                since = try state?.point ?? cache.newestTimestamp(conversationID: conversationID)
            } catch {
                log.error("cache read failed, fetching in full: \(error)")
            }
        }
        if let since {
            return await incrementalSync(conversationID, limit: limit, since: since)
        }
        return await fullFetch(conversationID, limit: limit, offset: offset)
    }

    /// Fetches a whole conversation from the newest message back, `pageSize` messages per request,
    /// writing each page in its own transaction and keeping no page after it is stored.
    ///
    /// Meant for prefetching and for measuring: memory stays bounded by one page.
    /// - Returns: How many messages were stored and what crossed the wire; stops at the first failure,
    ///   keeping the pages already stored. A server that answers a page with the same messages as the
    ///   page before (it ignores `offset`) stops the fetch with ``KecalekError/server`` instead of looping.
    public func fetchAll(conversation conversationID: String, pageSize: Int = 500) async -> KecalekBackfill {
        await tracked(conversationID) { await self.backfill(conversationID, pageSize: pageSize) }
    }

    private func backfill(_ conversationID: String, pageSize: Int) async -> KecalekBackfill {
        var result = KecalekBackfill(conversationID: conversationID)
        let pageSize = max(1, pageSize)
        var offset = 0
        var previousIDs: [String] = []
        while true {
            let (outcome, record) = await request(
                "get_messages",
                [
                    "conversation_id": .string(conversationID), "limit": .int(Int64(pageSize)),
                    "offset": .int(Int64(offset)),
                ],
                items: { $0.data["messages"]?.arrayValue?.count ?? 0 })
            result.traffic.requests.append(record)
            guard case .success(let response) = outcome else {
                result.failure = record.failure
                return result
            }
            let raw = response.data["messages"]?.arrayValue ?? []
            let count = raw.count
            largestPageSeen = max(largestPageSeen, count)
            // A server that ignores `offset` answers every request with the same full page: without this
            // check the loop would never end.
            let ids = raw.compactMap { $0["message_id"]?.identifierValue }
            if !ids.isEmpty, ids == previousIDs {
                result.failure = KecalekError(
                    .server, operation: "get_messages", detail: "the page at offset \(offset) repeats the previous one")
                return result
            }
            previousIDs = ids
            do {
                let applied = try storePage(response.data, conversationID: conversationID, keep: false)
                result.stored += applied.newIDs.count
                result.issues += applied.issues
            } catch {
                result.failure = KecalekError(.cache, operation: "cache.write", detail: "\(error)")
                return result
            }
            offset += count
            if count < pageSize { return result }
        }
    }

    /// The read receipts the client has seen for a message since launch (never cached).
    public func readReceipts(conversationID: String, messageID: String) -> [KecalekReadReceipt] {
        readReceipts[conversationID]?[messageID] ?? []
    }

    /// Refreshes every conversation opened with offset 0, incrementally, and emits
    /// ``KecalekChange/refreshed(conversationID:newMessageIDs:deletedMessageIDs:)`` for each.
    ///
    /// The client calls this after each reconnect.
    @discardableResult
    public func refreshOpenConversations(limit: Int = 50) async -> [KecalekMessagePage] {
        var pages: [KecalekMessagePage] = []
        for conversationID in openConversations {
            let page = await messages(conversation: conversationID, limit: limit)
            pages.append(page)
            emit(
                .refreshed(
                    conversationID: conversationID, newMessageIDs: page.newMessageIDs,
                    deletedMessageIDs: page.deletedMessageIDs))
        }
        return pages
    }

    /// Removes cached rows that cannot be read back and moves the sync point to the oldest of them, so
    /// this sync fetches them again: one damaged row costs that message, never the conversation.
    ///
    /// Looked for only when the page this call will show cannot be read, so an intact cache costs one
    /// read of that page.
    private func repairDamagedRows(_ conversationID: String, limit: Int) {
        do {
            _ = try cache.newestMessages(conversationID: conversationID, limit: limit)
            return
        } catch {
            log.warning("cache rows of a conversation do not read back: \(error)")
        }
        do {
            let damaged = try cache.damagedRows(conversationID: conversationID)
            guard let oldest = damaged.map(\.createdAt).min() else { return }
            let state = try cache.syncState(conversationID: conversationID)
            try cache.write { writer in
                try writer.deleteDamagedRows(damaged, conversationID: conversationID)
                if let state, oldest < state.point {
                    try writer.setSyncState(
                        KecalekSyncState(point: oldest, largestPage: state.largestPage), conversationID: conversationID)
                }
            }
            syncedOnGeneration[conversationID] = nil
            log.warning("removed \(damaged.count) damaged cache rows; fetching them again")
        } catch {
            log.error("could not repair the cache: \(error)")
        }
    }

    // MARK: Incremental

    private func incrementalSync(_ conversationID: String, limit: Int, since: KecalekTimestamp) async
        -> KecalekMessagePage
    {
        let startGeneration = currentGeneration
        var traffic = KecalekTraffic()
        let newer = await fetchNewer(conversationID, limit: limit, after: since, traffic: &traffic)
        if let failure = newer.failure {
            return cachePage(conversationID, limit: limit, error: failure, traffic: traffic)
        }
        let fetched = newer.messages
        let issues = newer.issues
        let totalCount = newer.totalCount

        let (deleteOutcome, deleteRecord) = await request(
            "get_deleted_since",
            ["conversation_id": .string(conversationID), "since": .string(since.oneTickEarlier.text)],
            items: { $0.data["message_ids"]?.arrayValue?.count ?? 0 })
        traffic.requests.append(deleteRecord)
        guard case .success(let deleteResponse) = deleteOutcome else {
            // Nothing is stored: storing the new messages without the deletions would move `after_ts`
            // past deletions we never learned about, and they would come back from the dead.
            return cachePage(conversationID, limit: limit, error: deleteRecord.failure ?? .server, traffic: traffic)
        }
        let deletedIDs = Set((deleteResponse.data["message_ids"]?.arrayValue ?? []).compactMap(\.identifierValue))
        // A `new_message` held back during this sync must not bring back what the server says is deleted.
        bufferedNewMessages[conversationID]?.removeAll { deletedIDs.contains($0.messageID) }
        deletedDuringSync[conversationID, default: []].formUnion(deletedIDs)

        // Deletions the server announced while the requests were answered count too: the readLoop may
        // have applied them between the responses and this point.
        let announced = deletedDuringSync[conversationID] ?? []
        let live = fetched.filter { !deletedIDs.contains($0.messageID) && !announced.contains($0.messageID) }
        // The pages are stored already (each as it came); this transaction removes what the server deleted
        // and only then moves the sync point, so the point never passes a deletion the cache still holds.
        var removed: [String] = []
        do {
            try cache.write { writer in
                removed = try writer.delete(conversationID: conversationID, messageIDs: deletedIDs.sorted())
                // A listing proved complete moves the point to the newest message; one cut off moves it only to
                // its frontier (everything up to it fetched), so the next sync continues from there. Otherwise
                // the next sync asks again from the same place, and deletions since then are asked for again.
                let newest = fetched.map(\.createdAt).max().map { max($0, since) } ?? since
                let point = newer.complete ? newest : newer.frontier.map { max($0, since) }
                if let point, newer.complete || point > since {
                    try writer.setSyncState(
                        KecalekSyncState(point: point, largestPage: largestPageSeen), conversationID: conversationID)
                }
            }
        } catch {
            return cachePage(
                conversationID, limit: limit,
                error: KecalekError(.cache, operation: "cache.write", detail: "\(error)"), traffic: traffic)
        }
        noteReceipts(live, conversationID: conversationID)
        forgetReceipts(removed, conversationID: conversationID)
        if !removed.isEmpty { emit(.messagesDeleted(conversationID: conversationID, messageIDs: removed)) }
        let gone = Set(removed)
        let newIDs = newer.newIDs.filter { !gone.contains($0) }
        var messages: [KecalekMessage] = []
        do {
            messages = try cache.newestMessages(conversationID: conversationID, limit: limit)
        } catch {
            log.error("cache read failed after sync: \(error)")
        }
        // As in a full fetch: a message that did not decrypt is neither stored nor marked read (the user has
        // not seen it). Nor is one the page does not show that is no newer than the sync point: asked from one
        // tick early, a burst in the point's second comes again whole, and its older part, below the cached
        // window, was never shown to anyone.
        let readable = newer.readable
        let shown = Set(messages.map(\.messageID))
        let seen = live.filter {
            readable.contains($0.messageID) && ($0.createdAt > since || shown.contains($0.messageID))
        }
        let marked = await markRead(seen, conversationID: conversationID, traffic: &traffic)
        if newer.complete, currentGeneration == startGeneration {
            syncedOnGeneration[conversationID] = startGeneration
        }
        if !newer.complete {
            log.warning("\(conversationID): the server's pages did not prove the cache current; will ask again")
        }
        return KecalekMessagePage(
            conversationID: conversationID, messages: withReceipts(messages), source: .incremental,
            totalCount: totalCount, newMessageIDs: newIDs, deletedMessageIDs: removed, markedRead: marked,
            issues: issues, traffic: traffic, gapRemains: !newer.complete)
    }

    // MARK: Full fetch

    private func fullFetch(_ conversationID: String, limit: Int, offset: Int) async -> KecalekMessagePage {
        let startGeneration = currentGeneration
        var traffic = KecalekTraffic()
        let (outcome, record) = await request(
            "get_messages",
            ["conversation_id": .string(conversationID), "limit": .int(Int64(limit)), "offset": .int(Int64(offset))],
            items: { $0.data["messages"]?.arrayValue?.count ?? 0 })
        traffic.requests.append(record)
        guard case .success(let response) = outcome else {
            let error = record.failure ?? .server
            if offset == 0 { return cachePage(conversationID, limit: limit, error: error, traffic: traffic) }
            return KecalekMessagePage(
                conversationID: conversationID, messages: [], source: .unavailable(error), totalCount: nil,
                newMessageIDs: [], deletedMessageIDs: [], markedRead: [], issues: [], traffic: traffic)
        }
        largestPageSeen = max(largestPageSeen, response.data["messages"]?.arrayValue?.count ?? 0)
        let applied: StoredPage
        do {
            applied = try storePage(response.data, conversationID: conversationID, keep: true)
        } catch {
            let failure = KecalekError(.cache, operation: "cache.write", detail: "\(error)")
            if offset == 0 { return cachePage(conversationID, limit: limit, error: failure, traffic: traffic) }
            return KecalekMessagePage(
                conversationID: conversationID, messages: [], source: .unavailable(failure), totalCount: nil,
                newMessageIDs: [], deletedMessageIDs: [], markedRead: [], issues: [], traffic: traffic)
        }
        if offset == 0, let newest = applied.newest {
            do {
                let state = KecalekSyncState(point: newest, largestPage: largestPageSeen)
                try cache.write { try $0.setSyncState(state, conversationID: conversationID) }
            } catch {
                log.error("cache write failed: \(error)")
            }
        }
        let marked = await markRead(applied.wire, conversationID: conversationID, traffic: &traffic)
        // An empty conversation gives no sync point: not current, so announced messages wait for the next sync.
        if offset == 0, currentGeneration == startGeneration, applied.newest != nil {
            syncedOnGeneration[conversationID] = startGeneration
        }
        let visible = applied.messages.filter { !$0.isControl }.sorted(by: KecalekMemoryCache.order)
        return KecalekMessagePage(
            conversationID: conversationID, messages: withReceipts(visible), source: .full,
            totalCount: response.data["total_count"]?.intValue, newMessageIDs: applied.newIDs, deletedMessageIDs: [],
            markedRead: marked, issues: applied.issues, traffic: traffic)
    }

    /// Stores one listing page's messages new to this sync in one transaction: the ones a deletion
    /// notification removed meanwhile are skipped, reaction and pin notifications that arrived during the
    /// sync are applied over them, and what does not decrypt is reported, not stored.
    func storeListed(_ wires: [KecalekWireMessage], conversationID: String, into result: inout NewerMessages) throws {
        let announced = deletedDuringSync[conversationID] ?? []
        let opened = decrypt(wires.filter { !announced.contains($0.messageID) })
        var inserted: [String] = []
        if !opened.messages.isEmpty {
            try cache.write { writer in
                for message in opened.messages where try writer.upsert(withChangesDuringSync(message)) {
                    inserted.append(message.messageID)
                }
            }
        }
        result.readable.formUnion(opened.messages.map(\.messageID))
        result.newIDs += inserted
        result.issues += opened.issues
        if !inserted.isEmpty { emit(.messagesStored(conversationID: conversationID, messageIDs: inserted)) }
        for issue in opened.issues { emit(.issue(issue)) }
    }

    struct StoredPage {
        var messages: [KecalekMessage] = []
        var wire: [KecalekWireMessage] = []
        var newIDs: [String] = []
        var issues: [KecalekMessageIssue] = []
        /// The newest `created_at` of the page, undecryptable messages included (as an incremental sync
        /// counts them), so the sync point does not fetch them again and again.
        var newest: KecalekTimestamp?
    }

    /// Decodes, decrypts and upserts a page's messages one by one inside one transaction, so that no
    /// decoded copy of the whole page exists unless `keep` asks for it.
    func storePage(_ data: JSONValue, conversationID: String, keep: Bool) throws -> StoredPage {
        var page = StoredPage()
        var receipts: [KecalekWireMessage] = []
        let announced = deletedDuringSync[conversationID] ?? []
        try cache.write { writer in
            for element in data["messages"]?.arrayValue ?? [] {
                guard let wire = decodeWire(element, conversationID: conversationID, issues: &page.issues) else {
                    continue
                }
                page.newest = max(page.newest ?? wire.createdAt, wire.createdAt)
                // Deleted by a notification that overtook this page: storing it would resurrect it.
                if announced.contains(wire.messageID) { continue }
                var message: KecalekMessage
                do {
                    message = try open(wire)
                } catch {
                    page.issues.append(
                        KecalekMessageIssue(
                            messageID: wire.messageID, conversationID: conversationID, error: asKecalek(error)))
                    continue
                }
                message = withChangesDuringSync(message)
                if try writer.upsert(message) { page.newIDs.append(message.messageID) }
                if !wire.readBy.isEmpty || wire.senderID != configuration.userID { receipts.append(stripped(wire)) }
                if keep {
                    page.messages.append(message)
                    page.wire.append(stripped(wire))
                }
            }
        }
        noteReceipts(receipts, conversationID: conversationID)
        if !page.newIDs.isEmpty { emit(.messagesStored(conversationID: conversationID, messageIDs: page.newIDs)) }
        for issue in page.issues {
            log.warning("skipped message: \(issue)")
            emit(.issue(issue))
        }
        return page
    }

    /// The wire message without its blob, for bookkeeping that only needs metadata.
    func stripped(_ wire: KecalekWireMessage) -> KecalekWireMessage {
        var copy = wire
        copy.encryptedPayload = Data()
        return copy
    }
}

/// Identifies a page fetch that concurrent callers can share.
struct SharedSyncKey: Hashable {
    let conversationID: String
    let limit: Int
    let offset: Int
}

/// A running page fetch and the limit it was asked with.
struct SharedSync {
    let limit: Int
    let task: Task<KecalekMessagePage, Never>
}

extension KecalekMessagePage {
    /// The same answer showing only the newest `limit` messages (a caller that shared a larger fetch).
    func showing(_ limit: Int) -> KecalekMessagePage {
        var copy = self
        copy.messages = Array(messages.suffix(limit))
        return copy
    }
}

/// The outcome of ``KecalekClient/fetchAll(conversation:pageSize:)``.
public struct KecalekBackfill: Sendable {
    /// The conversation.
    public var conversationID: String
    /// Messages newly stored.
    public var stored = 0
    /// Messages skipped.
    public var issues: [KecalekMessageIssue] = []
    /// What crossed the wire.
    public var traffic = KecalekTraffic()
    /// Why the fetch stopped early, if it did.
    public var failure: KecalekError?
}
