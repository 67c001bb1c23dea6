import TidingsCore

/// Offline actions: queued durably with their local effect, replayed in order through the live events, one at a
/// time, confirmed by the server's echo (the event it pushes to every device of the user, this one included).
///
/// The public server at the seed's commit applies nothing through `sync_offline_changes`, so replay uses the
/// ordinary events; an action is acknowledged only by the echo that proves the server applied it:
/// `new_chat_message` naming the sent message, `message_deleted` naming the deleted one,
/// `chat_pinned_updated` with the pinned value, `chat_update` with the archived or hidden value. An `error`
/// event naming the action's `client_action_id` (or, naming no action, the action's chat), no answer within ``Configuration/actionTimeout``, or a
/// connection that ends first each count as one failed try; after ``Configuration/maximumActionTries`` the
/// action leaves the queue, its local effect is undone and ``Change/actionFailed(_:_:)`` says why. A resent
/// action carries the same message ID and values, so a server that applied it before the connection dropped
/// applies nothing twice and echoes again.
extension OpenMatesClient {
    /// Sends a message: stored locally at once (it survives server content until acknowledged) and replayed.
    ///
    /// - Throws: ``OpenMatesError/store`` when the action could not be queued (nothing was changed),
    ///   ``OpenMatesError/actionFailed`` when the chat was deleted.
    @discardableResult
    public func sendMessage(
        chatID: String, messageID: String, role: String = "user", encryptedContent: String, createdAt: Int
    ) async throws(OpenMatesError) -> OpenMatesPendingAction {
        let message = OpenMatesWireMessage(
            messageID: messageID, chatID: chatID, role: role, createdAt: createdAt,
            raw: ["encrypted_content": .string(encryptedContent)])
        let action = OpenMatesPendingAction(
            kind: .sendMessage, chatID: chatID,
            payload: ["message": .object(message.raw), "message_id": .string(messageID)])
        return try await queue(
            action,
            [.mergeMessages(chatID: chatID, messages: [message], messagesV: nil, serverMessageCount: nil)])
    }

    /// Deletes a message locally at once (server content does not bring it back while pending) and replays it.
    ///
    /// - Throws: ``OpenMatesError/store`` when the action could not be queued, ``OpenMatesError/actionFailed``
    ///   when the chat was deleted.
    @discardableResult
    public func deleteMessage(chatID: String, messageID: String) async throws(OpenMatesError)
        -> OpenMatesPendingAction
    {
        let action = OpenMatesPendingAction(
            kind: .deleteMessage, chatID: chatID, payload: ["message_id": .string(messageID)])
        return try await queue(action, [.deleteMessage(chatID: chatID, messageID: messageID)])
    }

    /// Pins or unpins a chat locally at once and replays it (`pin_chat`).
    ///
    /// - Throws: ``OpenMatesError/store`` when the action could not be queued, ``OpenMatesError/actionFailed``
    ///   when the chat was deleted.
    @discardableResult
    public func setPinned(_ pinned: Bool, chatID: String) async throws(OpenMatesError) -> OpenMatesPendingAction {
        try await queueFlag(.pinChat, key: "pinned", value: pinned, chatID: chatID, current: \.pinned) {
            $0.pinned = $1
        }
    }

    /// Archives or unarchives a chat locally at once and replays it (`archive_chat`).
    ///
    /// - Throws: ``OpenMatesError/store`` when the action could not be queued, ``OpenMatesError/actionFailed``
    ///   when the chat was deleted.
    @discardableResult
    public func setArchived(_ archived: Bool, chatID: String) async throws(OpenMatesError)
        -> OpenMatesPendingAction
    {
        try await queueFlag(.archiveChat, key: "is_archived", value: archived, chatID: chatID, current: \.archived) {
            $0.archived = $1
        }
    }

    /// Hides or shows a chat locally at once and replays it (`hide_chat`).
    ///
    /// - Throws: ``OpenMatesError/store`` when the action could not be queued, ``OpenMatesError/actionFailed``
    ///   when the chat was deleted.
    @discardableResult
    public func setHidden(_ hidden: Bool, chatID: String) async throws(OpenMatesError) -> OpenMatesPendingAction {
        try await queueFlag(.hideChat, key: "is_hidden", value: hidden, chatID: chatID, current: \.hidden) {
            $0.hidden = $1
        }
    }

    private func queueFlag(
        _ kind: OpenMatesPendingAction.Kind, key: String, value: Bool, chatID: String,
        current: (OpenMatesChat) -> Bool, set: (inout OpenMatesChat, Bool) -> Void
    ) async throws(OpenMatesError) -> OpenMatesPendingAction {
        let stored: OpenMatesChat?
        let earlier: OpenMatesPendingAction?
        do {
            stored = try store.chat(chatID)?.chat
            earlier = try store.pendingActions().first { $0.kind == kind && $0.chatID == chatID }
        } catch {
            throw OpenMatesError(.store, operation: kind.rawValue, detail: "\(error)")
        }
        // A chat that is not stored (deleted, or never synced) gets no row: an action never creates one.
        var changes: [OpenMatesStoreChange] = []
        var payload: [String: JSONValue] = [key: .bool(value)]
        if var chat = stored {
            // The value before the first queued action on this flag: a later action's "before" is only the
            // earlier action's wish, which the server may refuse.
            let before = earlier?.payload.omBool(OpenMatesPendingAction.valueBeforeKey) ?? current(chat)
            payload[OpenMatesPendingAction.valueBeforeKey] = .bool(before)
            set(&chat, value)
            changes.append(.upsertChat(chat))
        }
        return try await queue(OpenMatesPendingAction(kind: kind, chatID: chatID, payload: payload), changes)
    }

    private func queue(_ action: OpenMatesPendingAction, _ changes: [OpenMatesStoreChange]) async throws(OpenMatesError)
        -> OpenMatesPendingAction
    {
        let queued: OpenMatesPendingAction
        do {
            // A deleted chat stays deleted: no action on it is queued. A chat not stored gets no local effect
            // (no orphan rows); the server decides.
            let view = try store.localView()
            guard !view.tombstones.contains(action.chatID) else {
                throw OpenMatesError(
                    .actionFailed, operation: action.kind.rawValue, detail: "the chat was deleted",
                    chatIDs: [action.chatID])
            }
            queued = try store.enqueue(action, applying: view.chats[action.chatID] == nil ? [] : changes)
        } catch let error as OpenMatesError {
            throw error
        } catch {
            throw OpenMatesError(.store, operation: action.kind.rawValue, detail: "\(error)")
        }
        broadcaster.publish(.storeChanged)
        await replayNextAction()
        return queued
    }

    /// The offline actions that failed for good and were not dismissed, oldest first: the same failures
    /// ``Change/actionFailed(_:_:)`` announced, still readable after the announcement and after a relaunch.
    ///
    /// - Throws: ``OpenMatesError/store``.
    public func failedActions() throws(OpenMatesError) -> [OpenMatesFailedAction] {
        do { return try store.failedActions() } catch {
            throw OpenMatesError(.store, operation: "failedActions", detail: "\(error)")
        }
    }

    /// Forgets a failed action once the user has seen it; an ID that is not (or no longer) there changes nothing.
    ///
    /// - Throws: ``OpenMatesError/store``; the record is kept then.
    public func dismissFailedAction(id: Int64) throws(OpenMatesError) {
        do { try store.dismissFailedAction(id: id) } catch {
            throw OpenMatesError(.store, operation: "dismissFailedAction", detail: "\(error)")
        }
    }

    /// Sends the oldest queued action when connected and none is in flight.
    func replayNextAction() async {
        guard actionInFlight == nil, let open = channel, !stopped else { return }
        let next: OpenMatesPendingAction?
        do { next = try store.pendingActions().first } catch {
            broadcaster.publish(.failure(OpenMatesError(.store, operation: "pendingActions", detail: "\(error)")))
            return
        }
        guard let next else { return }
        actionInFlight = next.id
        let timeout = configuration.actionTimeout
        actionTimeoutTask = Task { [clock] in
            do { try await clock.sleep(for: timeout) } catch { return }
            await self.actionTimedOut(next.id)
        }
        await send(.action(next), on: open)
    }

    private func actionTimedOut(_ id: Int64) async {
        guard actionInFlight == id, !stopped else { return }
        await actionTryEnded(reason: "the server did not answer")
        await replayNextAction()
    }

    /// Acknowledges or refuses the action in flight when `event` is its echo or its refusal.
    func settleActionInFlight(envelope: OpenMatesEnvelope, event: OpenMatesServerEvent) async {
        guard let id = actionInFlight,
            let action = (try? store.pendingActions())?.first(where: { $0.id == id })
        else { return }
        if envelope.type == "error", Self.refuses(envelope.payload, actionID: id, chatID: action.chatID) {
            await actionTryEnded(reason: envelope.payload.omString("message") ?? "refused by the server")
            await replayNextAction()
            return
        }
        guard Self.confirms(event, action) else { return }
        finishInFlight()
        do { try store.acknowledge(id) } catch {
            broadcaster.publish(.failure(OpenMatesError(.store, operation: "acknowledge", detail: "\(error)")))
            return
        }
        broadcaster.publish(.actionSucceeded(action))
        await replayNextAction()
    }

    /// Whether an `error` is the refusal of the action in flight: it names the action's `client_action_id`, or —
    /// as the public server's handlers word a refusal, `{message, chat_id}` — names no action but the action's
    /// chat. Only one action is in flight, so such an error is about it or about another request on the same
    /// chat; taking the latter for a refusal costs one try and an idempotent resend, while leaving every
    /// refusal to the deadline would show "the server did not answer" instead of the server's reason.
    /// An `error` naming neither is left to the deadline: nothing ties it to the action.
    static func refuses(_ payload: [String: JSONValue], actionID: Int64, chatID: String) -> Bool {
        if let named = payload.omID("client_action_id") { return named == String(actionID) }
        return payload.omID("chat_id") == chatID
    }

    static func confirms(_ event: OpenMatesServerEvent, _ action: OpenMatesPendingAction) -> Bool {
        switch (action.kind, event) {
        case (.sendMessage, .newChatMessage(let chatID, let message, _, _)):
            return chatID == action.chatID && message.messageID == action.messageID
        case (.deleteMessage, .messageDeleted(let chatID, let messageID, _)):
            return chatID == action.chatID && messageID == action.messageID
        case (.pinChat, .chatPinnedUpdated(let chatID, let pinned)):
            return chatID == action.chatID && pinned == action.payload.omBool("pinned")
        case (.pinChat, .chatUpdate(let record)):
            return record.chatID == action.chatID && record.pinned != nil
                && record.pinned == action.payload.omBool("pinned")
        case (.archiveChat, .chatUpdate(let record)):
            return record.chatID == action.chatID && record.archived != nil
                && record.archived == action.payload.omBool("is_archived")
        case (.hideChat, .chatUpdate(let record)):
            return record.chatID == action.chatID && record.hidden != nil
                && record.hidden == action.payload.omBool("is_hidden")
        default: return false
        }
    }

    func finishInFlight() {
        actionInFlight = nil
        actionTimeoutTask?.cancel()
        actionTimeoutTask = nil
    }

    /// Counts a failed try of the action in flight; after the last one the action fails for good.
    func actionTryEnded(reason: String) async {
        guard let id = actionInFlight, !stopped else { return }
        finishInFlight()
        do {
            try store.recordFailure(id, reason: reason)
            guard let action = try store.pendingActions().first(where: { $0.id == id }),
                action.tries >= configuration.maximumActionTries
            else { return }
            let failed = OpenMatesFailedAction(action: action, reason: "\(reason) (\(action.tries) tries)")
            try store.abandon(action, reason: failed.reason)
            broadcaster.publish(.storeChanged)
            broadcaster.publish(.actionFailed(action, failed.error))
        } catch {
            broadcaster.publish(.failure(OpenMatesError(.store, operation: "recordFailure", detail: "\(error)")))
        }
    }
}
