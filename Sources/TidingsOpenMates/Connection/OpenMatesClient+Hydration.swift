import TidingsCore

extension OpenMatesClient {
    /// Opens a chat: its stored messages when they are its final state; otherwise the partial ones with a
    /// loading state while its content is requested (`request_chat_content_batch`), or "not available
    /// offline" when there is no connection (the request then goes out on the next connection).
    ///
    /// Requests are deduplicated (a chat already asked for is not asked again until the answer or a
    /// reconnect), batched (chats opened in one turn share one request, at most
    /// ``Configuration/contentBatchSize`` each) and re-sent after a reconnect. ``Change/hydrated(_:)`` or a
    /// ``Change/failure(_:)`` naming the chat ends the loading state.
    ///
    /// - Throws: ``OpenMatesError/store``; ``OpenMatesError/malformedPayload`` for a chat the store does not have.
    public func openChat(_ chatID: String) throws(OpenMatesError) -> ChatContent {
        let stored: (chat: OpenMatesChat, content: OpenMatesContentInfo)?
        let messages: [OpenMatesMessage]
        do {
            stored = try store.chat(chatID)
            messages = try store.messages(chatID: chatID)
        } catch {
            throw OpenMatesError(.store, operation: "openChat", detail: "\(error)")
        }
        guard let stored else { throw OpenMatesError(.malformedPayload, operation: "openChat", detail: "unknown chat") }
        if stored.content.isComplete(currentMessagesV: stored.chat.versions.messagesV) { return .loaded(messages) }
        hydrationWanted.insert(chatID)
        guard channel != nil else { return .notAvailableOffline(partial: messages) }
        scheduleHydration()
        return .loading(partial: messages)
    }

    /// Sends the wanted chats not in flight after the current turn, so chats opened together share requests.
    func scheduleHydration() {
        guard !hydrationFlushScheduled else { return }
        hydrationFlushScheduled = true
        Task { await self.flushHydration() }
    }

    private func flushHydration() async {
        hydrationFlushScheduled = false
        guard let open = channel else { return }
        let due = hydrationWanted.subtracting(hydrationInFlight).sorted()
        guard !due.isEmpty else { return }
        hydrationInFlight.formUnion(due)
        var start = 0
        while start < due.count {
            let batch = Array(due[start..<min(due.count, start + configuration.contentBatchSize)])
            start += batch.count
            await send(.contentBatch(chatIDs: batch), on: open)
            expireHydration(batch)
        }
    }

    /// Reports chats still unanswered after the hydration timeout as failed, so no loading state is endless.
    private func expireHydration(_ batch: [String]) {
        let timeout = configuration.hydrationTimeout
        Task { [clock] in
            do { try await clock.sleep(for: timeout) } catch { return }
            self.hydrationTimedOut(batch)
        }
    }

    private func hydrationTimedOut(_ batch: [String]) {
        let late = batch.filter { hydrationInFlight.contains($0) && hydrationWanted.contains($0) }
        guard !late.isEmpty else { return }
        hydrationInFlight.subtract(late)
        hydrationWanted.subtract(late)
        broadcaster.publish(
            .failure(
                OpenMatesError(
                    .contentUnavailable, operation: "request_chat_content_batch",
                    detail: "no answer in \(configuration.hydrationTimeout)", chatIDs: late)))
    }
}
