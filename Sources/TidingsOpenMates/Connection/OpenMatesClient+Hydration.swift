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

    /// Sends the next content request after the current turn, so chats opened together share one.
    func scheduleHydration() {
        guard !hydrationFlushScheduled else { return }
        hydrationFlushScheduled = true
        Task { await self.flushContentRequests() }
    }

    /// Sends one `request_chat_content_batch` when none is in flight: the wanted chats first (someone waits
    /// on them), then chats being verified, at most ``Configuration/contentBatchSize``.
    private func flushContentRequests() async {
        hydrationFlushScheduled = false
        guard let open = channel, contentInFlight == nil else { return }
        var batch = Array(hydrationWanted.sorted().prefix(configuration.contentBatchSize))
        batch += verification.take(configuration.contentBatchSize - batch.count, excluding: Set(batch))
        guard !batch.isEmpty else { return }
        contentRequestSerial += 1
        let request = OpenMatesContentRequest(serial: contentRequestSerial, chatIDs: batch)
        contentInFlight = request
        hydrationInFlight = Set(batch).intersection(hydrationWanted)
        await send(.contentBatch(chatIDs: batch), on: open)
        expire(request)
    }

    /// Ends the request at the hydration timeout when it is still unanswered, so no loading state is endless.
    private func expire(_ request: OpenMatesContentRequest) {
        let timeout = configuration.hydrationTimeout
        Task { [clock] in
            do { try await clock.sleep(for: timeout) } catch { return }
            await self.contentRequestTimedOut(request)
        }
    }

    private func contentRequestTimedOut(_ request: OpenMatesContentRequest) async {
        guard contentInFlight == request else { return }
        contentInFlight = nil
        // Its answer may still come, and would be taken for the next request's: no more matching here.
        contentAnswersUnmatched = true
        let late = request.chatIDs.filter { hydrationInFlight.contains($0) && hydrationWanted.contains($0) }
        hydrationInFlight.removeAll()
        hydrationWanted.subtract(late)
        if !late.isEmpty {
            broadcaster.publish(
                .failure(
                    OpenMatesError(
                        .contentUnavailable, operation: "request_chat_content_batch",
                        detail: "no answer in \(configuration.hydrationTimeout)", chatIDs: late)))
        }
        endVerification(reason: "a content request went unanswered")
        publishStatus()
        scheduleHydration()
    }

    /// Settles the request in flight with its answer (after the answer's plan was applied and its signals acted
    /// on): wanted chats the answer did not resolve fail, the verification moves on or ends, the next request
    /// goes out. An answer with nothing in flight only delivered content.
    func contentAnswerArrived(_ answer: OpenMatesContentBatchResponse, storedChats: Int) {
        guard let request = contentInFlight else { return }
        contentInFlight = nil
        let named = Set(answer.chats.map(\.chatID)).union(answer.failedChatIDs)
        if !named.union(answer.chatsWithoutContent).isSubset(of: request.chatIDs) { contentAnswersUnmatched = true }
        // Left out of an answer that could not be matched (or named by a partial_error without names): not
        // deleted on that evidence, reported unavailable so the loading state ends.
        let unresolved = request.chatIDs.filter { hydrationWanted.contains($0) && !named.contains($0) }
        hydrationInFlight.removeAll()
        if !unresolved.isEmpty {
            hydrationWanted.subtract(unresolved)
            broadcaster.publish(
                .failure(
                    OpenMatesError(
                        .contentUnavailable, operation: "chat_content_batch_response",
                        detail: "left out of an answer that could not be matched to its request", chatIDs: unresolved)
                ))
        }
        verification.resolve(request.chatIDs)
        if verification.isRunning, contentAnswersUnmatched {
            endVerification(reason: "answers could not be matched to their requests")
        } else if verification.isRunning, let total = verification.serverTotal, storedChats <= total {
            // The store no longer holds more chats than the server has: the deleted ones were found.
            _ = verification.end()
            tracker.verification(running: false, storedChatCount: storedChats)
        } else if !verification.isRunning {
            tracker.verification(running: false, storedChatCount: storedChats)
        }
        scheduleHydration()
    }

    /// The answer in flight could not be stored: its wanted chats fail (asking again would meet the same store),
    /// the verification ends, and the next request may go out.
    func contentAnswerNotStored() {
        guard let request = contentInFlight else { return }
        contentInFlight = nil
        let failed = request.chatIDs.filter { hydrationWanted.contains($0) }
        hydrationWanted.subtract(failed)
        hydrationInFlight.removeAll()
        if !failed.isEmpty {
            broadcaster.publish(
                .failure(
                    OpenMatesError(
                        .contentUnavailable, operation: "chat_content_batch_response",
                        detail: "the answer could not be stored", chatIDs: failed)))
        }
        endVerification(reason: "the store could not be written")
        publishStatus()
        scheduleHydration()
    }
}
