import Foundation

/// Fetching everything newer than a point from any server the document allows.
///
/// The document fixes only `created_at > after_ts`. Servers differ in what else they do: timestamps of any
/// resolution (many messages may share one), the oldest or the newest `limit` messages after `after_ts`,
/// `offset` honoured or ignored, a page-size cap below `limit`. So the client asks from one tick before its
/// point, drops what it already has by `message_id`, and pages until the answers prove that nothing is
/// left; when they cannot, the result says so instead of pretending.
///
/// Each page's new messages are stored as it arrives, in a transaction of their own, and only their
/// metadata is kept: memory stays bounded by one page, and the sync point (moved by the caller once the
/// deletions are in) is what tells a later sync where to ask from, so a sync cut off between pages leaves a
/// cache that the next one completes.
extension KecalekClient {
    struct NewerMessages {
        /// The fetched messages without their payloads (for `mark_read` and receipts), in fetch order.
        var messages: [KecalekWireMessage] = []
        /// Fetched messages that decrypted and were stored (or were cached already).
        var readable: Set<String> = []
        /// Messages new to the cache, in the order they were stored.
        var newIDs: [String] = []
        var issues: [KecalekMessageIssue] = []
        var totalCount: Int?
        /// Whether the answers proved that every message after the point was fetched.
        var complete = false
        /// When not complete: a later point up to which every message was fetched (the server answers oldest
        /// first), so the next sync continues from there instead of from the same point.
        var frontier: KecalekTimestamp?
        var failure: KecalekError?
        /// Every ID any page held, decodable or not.
        var seen: Set<String> = []
        var pages = 0
    }

    struct FetchedPage {
        var rawCount: Int
        var messages: [KecalekWireMessage]
        var addedIDs: Int
    }

    /// Every message created after `point` (and the ones stamped with `point` itself), page by page.
    func fetchNewer(_ conversationID: String, limit: Int, after point: KecalekTimestamp, traffic: inout KecalekTraffic)
        async -> NewerMessages
    {
        var result = NewerMessages()
        let after = point.oneTickEarlier
        var offset = 0
        var firstPage: [KecalekWireMessage] = []

        // Offset paging: right for either page order, as long as the server honours `offset`.
        while withinBudget(result, limit: limit) {
            let largestBefore = largestPageSeen
            guard
                let fetched = await listingPage(
                    conversationID, after: after, limit: limit, offset: offset, into: &result, traffic: &traffic)
            else { return result }
            if offset == 0 { firstPage = fetched.messages }
            if provesEnd(fetched.rawCount, limit: limit, largestBefore: largestBefore) {
                result.complete = true
                return result
            }
            // A page that repeats what came before: `offset` is ignored.
            if offset > 0, fetched.addedIDs == 0 { break }
            offset += fetched.rawCount
        }
        if !withinBudget(result, limit: limit) {
            return await withFrontier(conversationID, after: after, result: result, traffic: &traffic)
        }
        // `offset` is ignored: a larger `limit` may hold everything, whatever the page order.
        var pageLimit = limit
        let largestLimit = limit.multipliedReportingOverflow(by: max(1, configuration.maximumIncrementalPages))
        while withinBudget(result, limit: limit), !largestLimit.overflow, pageLimit < largestLimit.partialValue {
            pageLimit = min(largestLimit.partialValue, pageLimit * 2)
            let largestBefore = largestPageSeen
            guard
                let fetched = await listingPage(
                    conversationID, after: after, limit: pageLimit, offset: 0, into: &result, traffic: &traffic)
            else { return result }
            firstPage = fetched.messages
            if provesEnd(fetched.rawCount, limit: pageLimit, largestBefore: largestBefore) {
                result.complete = true
                return result
            }
            // Shorter than asked but not provably the end: a page-size cap, or exactly this many.
            if fetched.rawCount < pageLimit {
                pageLimit = fetched.rawCount
                break
            }
        }
        let paged = await cursorPaging(
            conversationID, limit: max(1, pageLimit), after: after, firstPage: firstPage, result: result,
            traffic: &traffic)
        guard !paged.complete, paged.failure == nil else { return paged }
        return await withFrontier(conversationID, after: after, result: paged, traffic: &traffic)
    }

    /// An incomplete listing's frontier: the newest timestamp fetched, when every message up to it is fetched
    /// too. That holds when the server answers the *oldest* messages after `after_ts` (each page then
    /// continues the one before), which a `limit: 1` probe tells: it must answer the oldest message fetched,
    /// and that must be older than the newest (one timestamp on everything fetched proves no order). The
    /// newest timestamp's ties may not all be in; the next sync asks from one tick before it anyway.
    private func withFrontier(
        _ conversationID: String, after: KecalekTimestamp, result: NewerMessages, traffic: inout KecalekTraffic
    ) async -> NewerMessages {
        var result = result
        guard let oldest = result.messages.map(\.createdAt).min(), let newest = result.messages.map(\.createdAt).max(),
            oldest < newest
        else { return result }
        guard
            let probe = await listingPage(
                conversationID, after: after, limit: 1, offset: 0, into: &result, traffic: &traffic)
        else { return result }
        if probe.messages.first?.createdAt == oldest { result.frontier = newest }
        return result
    }

    /// Whether another page may be asked for: at most `maximumIncrementalPages × limit` messages, and ten
    /// times as many requests as pages (a server with a small page-size cap needs more of them).
    private func withinBudget(_ result: NewerMessages, limit: Int) -> Bool {
        let pages = max(1, configuration.maximumIncrementalPages)
        let (messages, overflow) = pages.multipliedReportingOverflow(by: limit)
        return result.pages < pages * 10 && (overflow || result.seen.count < messages)
    }

    /// A short page ends a listing only when it is shorter than a page the server already sent: otherwise it
    /// may be the server's page-size cap, and the next page tells.
    private func provesEnd(_ count: Int, limit: Int, largestBefore: Int) -> Bool {
        count == 0 || (count < limit && count < largestBefore)
    }

    /// Paging by moving `after_ts` for a server that ignores `offset`: sound only when its pages hold the
    /// oldest messages after `after_ts`, which one `limit: 1` request tells.
    private func cursorPaging(
        _ conversationID: String, limit: Int, after: KecalekTimestamp, firstPage: [KecalekWireMessage],
        result: NewerMessages, traffic: inout KecalekTraffic
    ) async -> NewerMessages {
        var result = result
        // One timestamp on the whole page: no later `after_ts` can split it.
        guard let oldest = firstPage.map(\.createdAt).min(), let newest = firstPage.map(\.createdAt).max(),
            oldest < newest, withinBudget(result, limit: limit)
        else { return result }
        guard
            let probe = await listingPage(
                conversationID, after: after, limit: 1, offset: 0, into: &result, traffic: &traffic)
        else { return result }
        // Newest first: the older part of a full page can never be reached without `offset`.
        guard probe.messages.first?.createdAt == oldest else { return result }

        var lastPage = firstPage
        while withinBudget(result, limit: limit) {
            // Ask again for everything stamped like the page's newest message: its ties may not all be in.
            guard let top = lastPage.map(\.createdAt).max(),
                let cursor = lastPage.map(\.createdAt).filter({ $0 < top }).max()
            else { return result }
            let largestBefore = largestPageSeen
            guard
                let fetched = await listingPage(
                    conversationID, after: cursor, limit: limit, offset: 0, into: &result, traffic: &traffic)
            else { return result }
            if provesEnd(fetched.rawCount, limit: limit, largestBefore: largestBefore) {
                result.complete = true
                return result
            }
            if fetched.addedIDs == 0 { return result }
            lastPage = fetched.messages
        }
        return result
    }

    /// One `get_messages` with `after_ts`; new messages (by ID) are added to `result`. Nil on failure, which
    /// is recorded in `result`.
    private func listingPage(
        _ conversationID: String, after: KecalekTimestamp, limit: Int, offset: Int, into result: inout NewerMessages,
        traffic: inout KecalekTraffic
    ) async -> FetchedPage? {
        result.pages += 1
        let (outcome, record) = await request(
            "get_messages",
            [
                "conversation_id": .string(conversationID), "limit": .int(Int64(limit)), "offset": .int(Int64(offset)),
                "after_ts": .string(after.text),
            ], items: { $0.data["messages"]?.arrayValue?.count ?? 0 })
        traffic.requests.append(record)
        guard case .success(let response) = outcome else {
            result.failure = record.failure ?? .server
            return nil
        }
        result.totalCount = response.data["total_count"]?.intValue ?? result.totalCount
        let raw = response.data["messages"]?.arrayValue ?? []
        largestPageSeen = max(largestPageSeen, raw.count)
        let decoded = decodeWire(raw, conversationID: conversationID)
        result.issues += decoded.issues
        for issue in decoded.issues { emit(.issue(issue)) }
        // Undecodable elements count as seen too: they are lost to decoding, not to paging.
        let before = result.seen
        for element in raw { if let id = element["message_id"]?.identifierValue { result.seen.insert(id) } }
        let fresh = decoded.messages.filter { !before.contains($0.messageID) }
        do {
            try storeListed(fresh, conversationID: conversationID, into: &result)
        } catch {
            result.failure = KecalekError(.cache, operation: "cache.write", detail: "\(error)")
            return nil
        }
        result.messages += fresh.map(stripped)
        return FetchedPage(
            rawCount: raw.count, messages: decoded.messages, addedIDs: result.seen.count - before.count)
    }
}
