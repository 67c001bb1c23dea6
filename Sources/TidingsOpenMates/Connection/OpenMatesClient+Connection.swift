import Foundation
import TidingsCore
import TidingsNet

extension OpenMatesClient {
    /// Connects, serves the connection until it ends, and reconnects until stopped or given up.
    func run() async {
        var next: OpenMatesChannel? = try? await transport.connect()
        while !stopped, !Task.isCancelled {
            if let open = next {
                await serve(open)
                next = nil
                guard !stopped, !Task.isCancelled else { return }
            }
            guard configuration.reconnects else {
                tracker.failed("connection lost")
                publishStatus()
                return
            }
            next = await reconnect()
            if next == nil { return }
        }
        // Cancelled (``reconnectNow()``, a restart) while an attempt was opening a connection: the run that
        // replaced this one owns the connection state, so this one's socket must not stay open.
        await next?.close()
    }

    /// Waits a backoff delay before each attempt, continuing from the attempts made since the last connection
    /// that proved healthy (``ReconnectHealth``); nil when stopped. It never gives up on its
    /// own: after ``Configuration/maximumReconnectAttempts`` the status is `failed` and the attempts go on at the
    /// backoff's cap until one succeeds or the app closes the client.
    private func reconnect() async -> OpenMatesChannel? {
        var opened: OpenMatesChannel?
        var attempts = 0
        tracker.reconnecting(attempt: 1)
        publishStatus()
        let driver = ReconnectDriver(backoff: configuration.reconnectBackoff, clock: clock)
        await driver.run(afterFailures: reconnectHealth.attemptsSinceHealthy) {
            guard !stopped, !Task.isCancelled else { return true }
            attempts += 1
            reconnectHealth.attemptMade()
            let channel = try? await transport.connect()
            // A run replaced while its attempt was under way leaves the status to the one replacing it.
            guard !stopped, !Task.isCancelled else {
                opened = channel
                return true
            }
            if let channel {
                opened = channel
                return true
            }
            if attempts == configuration.maximumReconnectAttempts {
                tracker.failed("\(attempts) reconnect attempts failed; still trying")
                publishStatus()
                broadcaster.publish(.failure(OpenMatesError(.connectionFailed, detail: "\(attempts) attempts")))
            } else if attempts < configuration.maximumReconnectAttempts {
                tracker.reconnecting(attempt: attempts + 1)
                publishStatus()
            }
            return false
        }
        if stopped || Task.isCancelled {
            await opened?.close()
            return nil
        }
        return opened
    }

    /// One connection: sync request, pings, events until it ends.
    private func serve(_ open: OpenMatesChannel) async {
        let lifetime = Self.timeline(on: clock)
        channel = open
        // Published with the sync request's pending status below, never alone: a "connected" still showing the
        // last connection's "complete" would claim a store the server has not confirmed since the outage.
        tracker.connected()
        contentInFlight = nil
        contentAnswersUnmatched = false
        await requestSync(on: open)
        await send(.syncStatus, on: open)
        hydrationInFlight.removeAll()
        if !hydrationWanted.isEmpty { scheduleHydration() }
        pingsUnanswered = 0
        await replayNextAction()
        pongAwaited = false
        let interval = configuration.pingInterval
        let deadline = configuration.pongTimeout
        // A ping every `interval`; `deadline` after each, a missing pong ends the connection. A socket can stay
        // open while the server behind it is gone, so only its answer proves the connection alive.
        let timeline = Self.timeline(on: clock)
        pingTask = Task {
            await Self.keepAlive(self, open, timeline: timeline, interval: interval, deadline: deadline)
        }
        do {
            for try await frame in open.inbound {
                guard !stopped else { break }
                await handle(frame, on: open)
            }
        } catch {
            logger.info("connection ended: \(type(of: error))")
        }
        pingTask?.cancel()
        pingTask = nil
        // Only a connection that proved healthy starts the backoff over: after one the server ended early, the next
        // outage's delays continue to grow (a server that accepts and drops at once).
        if !stopped { reconnectHealth.connectionEnded(after: lifetime.elapsed) }
        if channel != nil {
            channel = nil
            await open.close()
        }
        hydrationInFlight.removeAll()
        // Its answer can no longer come; the next connection's sync decides afresh what to verify.
        contentInFlight = nil
        _ = verification.end()
        tracker.verification(running: false, storedChatCount: storedChatCount())
        await actionTryEnded(reason: "the connection ended before the server answered")
    }

    /// Pings at `interval`, `2 × interval`, … from now; `deadline` after each, a missing pong ends the connection.
    /// Deadlines are absolute, so a late wake-up does not push the next ping back.
    private nonisolated static func timeline(on clock: any Clock<Duration>) -> Timeline { Timeline(clock) }

    private static func keepAlive(
        _ client: OpenMatesClient, _ open: OpenMatesChannel, timeline: Timeline, interval: Duration,
        deadline: Duration
    ) async {
        var next = interval
        do {
            while !Task.isCancelled {
                try await timeline.sleep(until: next)
                await client.sendPing(on: open)
                try await timeline.sleep(until: next + deadline)
                guard await client.connectionAnsweredPing(open) else { return }
                next += interval
            }
        } catch {}
    }

    private func sendPing(on open: OpenMatesChannel) async {
        pongAwaited = true
        await send(.ping, on: open)
    }

    /// Whether the ping was answered; when not, closes the connection, which ends ``serve(_:)`` and reconnects.
    private func connectionAnsweredPing(_ open: OpenMatesChannel) async -> Bool {
        guard pongAwaited else { return true }
        guard !stopped, channel != nil else { return false }
        logger.info("no pong within \(configuration.pongTimeout): the connection is taken for dead")
        tracker.noteError("the server stopped answering pings")
        await open.close()
        return false
    }

    /// Decodes one frame, applies its plan in one transaction and acts on its signals.
    func handle(_ frame: String, on open: OpenMatesChannel) async {
        let envelope: OpenMatesEnvelope
        do { envelope = try OpenMatesEnvelope(text: frame) } catch {
            logger.notice("ignored a frame: \(error)")
            return
        }
        traffic.received[envelope.type, default: 0] += 1
        let event = OpenMatesServerEvent(envelope)
        switch event {
        case .ping:
            await send(.pong, on: open)
            return
        case .pong:
            pongAwaited = false
            pingsUnanswered = max(0, pingsUnanswered - 1)
            await actionPongArrived()
            return
        case .unknown(let type):
            logger.info("ignored unknown event \(type)")
            return
        case .malformed(let type, let detail):
            logger.notice("ignored malformed \(type): \(detail)")
            return
        default: break
        }
        let plan: OpenMatesSyncPlan
        let storedChats: Int
        // An answer is matched to the one request in flight, unless answers on this connection stopped fitting.
        var requested: [String]?
        if case .chatContentBatch = event, !contentAnswersUnmatched { requested = contentInFlight?.chatIDs }
        do {
            plan = applier.plan(event, view: try store.localView(), requestedContent: requested)
            try store.apply(plan.changes)
            storedChats = try store.count(.chats)
        } catch {
            broadcaster.publish(.failure(OpenMatesError(.store, operation: envelope.type, detail: "\(error)")))
            if case .chatContentBatch = event { contentAnswerNotStored() }
            return
        }
        if !plan.changes.isEmpty { broadcaster.publish(.storeChanged) }
        await settleActionInFlight(envelope: envelope, event: event)
        tracker.reevaluate(storedChatCount: storedChats)
        for signal in plan.signals {
            tracker.apply(signal, storedChatCount: storedChats)
            await act(on: signal, open: open, storedChats: storedChats)
            if stopped { return }
        }
        if case .chatContentBatch(let answer) = event {
            contentAnswerArrived(answer, storedChats: storedChats)
            tracker.reevaluate(storedChatCount: storedChats)
        }
        publishStatus()
        await resumeBackgroundSync(on: open)
    }

    /// Asks again for a phase 3 the app wanted and a lost connection cut, once the reconnect's `all` sync is
    /// complete (its verification included): phase 3 fills what `all` leaves metadata-only, so it comes after.
    private func resumeBackgroundSync(on open: OpenMatesChannel) async {
        guard backgroundSyncWanted, !stopped else { return }
        switch tracker.status.backgroundSync {
        case .finished: backgroundSyncWanted = false
        case .running: break
        case .idle:
            guard tracker.status.sync == .complete else { return }
            await requestSync(on: open, phase: "phase3")
        }
    }

    private func act(on signal: OpenMatesSyncSignal, open: OpenMatesChannel, storedChats: Int) async {
        switch signal {
        case .chatsDeleted(let chatIDs): await chatsDeleted(chatIDs)
        case .verifyChats(let chatIDs, let total):
            startVerification(chatIDs, serverTotal: total, storedChats: storedChats)
        case .requestFreshSync: await requestSync(on: open)
        case .hydrated(let chatIDs):
            hydrationWanted.subtract(chatIDs)
            hydrationInFlight.subtract(chatIDs)
            broadcaster.publish(.hydrated(chatIDs))
        case .hydrationFailed(let chatIDs, let message):
            let failed = chatIDs.isEmpty ? Array(hydrationInFlight).sorted() : chatIDs
            hydrationWanted.subtract(failed)
            hydrationInFlight.subtract(failed)
            broadcaster.publish(
                .failure(
                    OpenMatesError(
                        .contentUnavailable, operation: "chat_content_batch_response", detail: message, chatIDs: failed)
                ))
        case .initialSyncFailed(let message):
            broadcaster.publish(.failure(OpenMatesError(.initialSyncFailed, detail: message)))
        case .serverError(let message):
            broadcaster.publish(.failure(OpenMatesError(.server, detail: message)))
        case .offlineSyncReply(let processed, _, _) where processed == 0:
            broadcaster.publish(
                .failure(
                    OpenMatesError(.server, operation: "offline_sync_complete", detail: "the server applied nothing")))
        case .loggedOut(let reason):
            try? await logout()
            broadcaster.publish(.failure(OpenMatesError(.loggedOut, operation: "force_logout", detail: reason)))
        default: break
        }
    }
}
