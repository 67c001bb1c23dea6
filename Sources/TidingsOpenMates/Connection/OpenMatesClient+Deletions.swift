import TidingsCore

/// Chats the server deleted, and the verification that finds those another device deleted while this client
/// was offline (it got no `chat_deleted` for them, and phased sync lists no deletions).
///
/// What wins: the server's deletion. A deleted chat leaves the store with a tombstone whatever is pending on
/// it; its queued offline actions fail at once with ``OpenMatesError/actionFailed`` ("the chat was deleted",
/// ``Change/actionFailed(_:_:)``) instead of being replayed against a chat the server no longer has — none is
/// dropped silently.
extension OpenMatesClient {
    /// Starts verifying the stored chats a sync did not account for, when its `total_chat_count` is below the
    /// chats stored: they are asked for with content requests, one at a time, and those the answers leave out
    /// are deleted. Sync stays pending meanwhile.
    func startVerification(_ chatIDs: [String], serverTotal: Int, storedChats: Int) {
        guard storedChats > serverTotal else { return }
        guard !contentAnswersUnmatched else {
            tracker.verification(running: false, storedChatCount: storedChats, unverified: chatIDs.count)
            tracker.noteError(
                "\(chatIDs.count) chats not verified: answers on this connection cannot be matched to requests; "
                    + "verified again at the next sync")
            return
        }
        verification.start(chatIDs, serverTotal: serverTotal)
        tracker.verification(running: verification.isRunning, storedChatCount: storedChats)
        scheduleHydration()
    }

    /// Ends a verification that cannot go on; the chats left are verified again at the next sync, and the UI
    /// learns how many (``OpenMatesSyncStatus/lastError``). Sync is then as complete as the phased sync made it:
    /// nothing showed those chats deleted.
    func endVerification(reason: String) {
        let left = verification.end()
        tracker.verification(running: false, storedChatCount: storedChatCount(), unverified: left)
        if left > 0 { tracker.noteError("\(left) chats not verified: \(reason); verified again at the next sync") }
    }

    /// The store's chat count for the status (0 when it cannot be read: the status then waits for data).
    func storedChatCount() -> Int { (try? store.count(.chats)) ?? 0 }

    /// The server deleted these chats (they already left the store): they end any loading state and their
    /// queued actions fail at once.
    func chatsDeleted(_ chatIDs: [String]) async {
        hydrationWanted.subtract(chatIDs)
        hydrationInFlight.subtract(chatIDs)
        verification.resolve(chatIDs)
        broadcaster.publish(.chatsDeleted(chatIDs))
        await failActions(onDeleted: Set(chatIDs))
    }

    private func failActions(onDeleted chatIDs: Set<String>) async {
        let actions: [OpenMatesPendingAction]
        do { actions = try store.pendingActions().filter { chatIDs.contains($0.chatID) } } catch {
            broadcaster.publish(.failure(OpenMatesError(.store, operation: "pendingActions", detail: "\(error)")))
            return
        }
        guard !actions.isEmpty else { return }
        var inFlightFailed = false
        for action in actions {
            if action.id == actionInFlight {
                finishInFlight()
                inFlightFailed = true
            }
            let failed = OpenMatesFailedAction(action: action, reason: "the chat was deleted")
            do { try store.abandon(action, reason: failed.reason) } catch {
                broadcaster.publish(.failure(OpenMatesError(.store, operation: "abandon", detail: "\(error)")))
                continue
            }
            broadcaster.publish(.actionFailed(action, failed.error))
        }
        broadcaster.publish(.storeChanged)
        if inFlightFailed { await replayNextAction() }
    }
}
