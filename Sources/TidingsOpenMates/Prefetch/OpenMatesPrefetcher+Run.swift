import Foundation
import TidingsCore
import TidingsNet

extension OpenMatesPrefetcher {
    /// One run: requests pages until the pass is done or something stops it, then leaves its state.
    func run(_ generation: Int) async {
        let outcome = await fetchPages(generation)
        // A stopped run's state was already set by whoever stopped it.
        guard generation == self.generation else { return }
        runTask = nil
        setState(outcome ?? .idle)
    }

    func isCurrent(_ generation: Int) -> Bool { generation == self.generation && !Task.isCancelled }

    /// The state the run ends in, or nil when it was stopped from outside.
    private func fetchPages(_ generation: Int) async -> State? {
        while isCurrent(generation) {
            if let block = conditions.block { return .blocked(block) }
            let cursor: Int
            do {
                let stored = try store.count(.messages)
                if stored >= configuration.maximumStoredMessages { return .capReached(storedMessages: stored) }
                cursor = try store.prefetchCursor()
            } catch {
                return .failed(OpenMatesPrefetchError(.store, detail: "\(error)"))
            }
            setState(.running(cursor: cursor))
            do {
                if let last = lastRequestAt { try await timeline.sleep(until: last + configuration.spacing) }
                try await budget.acquire(
                    host: transport.host, account: configuration.account, family: Self.rateLimitFamily)
            } catch {
                return nil
            }
            guard isCurrent(generation) else { return nil }
            let request = OpenMatesPrefetchRequest(
                cursor: cursor, limit: configuration.chunkSize, includeEmbeds: configuration.includeEmbeds)
            lastRequestAt = timeline.elapsed
            requestsSent += 1
            let reply: OpenMatesPrefetchReply
            do { reply = try await send(request) } catch {
                guard isCurrent(generation) else { return nil }
                return .failed(error)
            }
            await budget.record(
                reply.rateLimitSignal, host: transport.host, account: configuration.account,
                family: Self.rateLimitFamily)
            guard isCurrent(generation) else { return nil }
            switch reply.status {
            case 200..<300:
                do {
                    if try store(reply.body, cursor: cursor) { return .finished }
                } catch {
                    return .failed(error)
                }
            case 429:
                logger.info("prefetch rate limited; waiting for the budget")
                broadcaster.publish(.rateLimited)
            case 401, 403:
                return .failed(OpenMatesPrefetchError(.unauthorized, status: reply.status))
            default:
                return .failed(OpenMatesPrefetchError(.status, status: reply.status))
            }
        }
        return nil
    }

    /// Sends one request bounded by the deadline; the transport's call is cancelled when it passes.
    private func send(_ request: OpenMatesPrefetchRequest) async throws(OpenMatesPrefetchError)
        -> OpenMatesPrefetchReply
    {
        let transport = self.transport
        let timeout = configuration.requestTimeout
        let timeline = self.timeline
        do {
            return try await withThrowingTaskGroup(of: OpenMatesPrefetchReply?.self) { group in
                group.addTask { try await transport.post(request, timeout: timeout) }
                group.addTask {
                    try await timeline.sleep(for: timeout)
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let reply = first else {
                    throw OpenMatesPrefetchError(.timedOut, detail: "no answer within \(timeout)")
                }
                return reply
            }
        } catch let error as OpenMatesPrefetchError {
            throw error
        } catch HTTPError.timedOut {
            throw OpenMatesPrefetchError(.timedOut, detail: "no answer within \(timeout)")
        } catch {
            throw OpenMatesPrefetchError(.transport, detail: "\(type(of: error))")
        }
    }

    /// Decodes, plans and stores one page with the cursor past it, in one transaction and without a suspension
    /// point, so a logout or a stop can never interleave; true when the pass is done.
    private func store(_ body: Data, cursor: Int) throws(OpenMatesPrefetchError) -> Bool {
        let page = try OpenMatesPrefetchPage(body: body)
        let next: Int?
        if page.done {
            next = nil
        } else if let stated = page.nextCursor, stated > cursor {
            // Past the server's range there is nothing more it will send.
            next = stated > OpenMatesPrefetchRequest.cursorRange.upperBound ? nil : stated
        } else {
            throw OpenMatesPrefetchError(.cursorStalled, detail: "next_cursor does not move past \(cursor)")
        }
        let plan: OpenMatesPrefetchPlanner.Plan
        do {
            plan = OpenMatesPrefetchPlanner.plan(page, view: try store.localView())
            try store.applyPrefetchPage(plan.changes, cursor: next)
        } catch {
            throw OpenMatesPrefetchError(.store, detail: "\(error)")
        }
        broadcaster.publish(.pageStored(cursor: cursor, nextCursor: next, plan: plan))
        return next == nil
    }
}
