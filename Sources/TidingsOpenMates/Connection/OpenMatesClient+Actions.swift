import TidingsCore

/// Offline actions: queued durably with their local effect, replayed in order, one at a time, in the reference
/// server's own events (commit 1f6bb71; the seeds' README, "OpenMates actions"), each settled by what that
/// server answers the acting device:
///
/// | Action | Event sent | Success | Refusal |
/// |---|---|---|---|
/// | store a message | `encrypted_chat_metadata` {chat_id, message_id, encrypted_content, created_at, encrypted_chat_key, versions} | `encrypted_metadata_stored` naming the message (the handler's last answer) | `error` naming the chat, `chat_key_mismatch`, `incomplete_chat_metadata` |
/// | ask the AI | `chat_message_added` {chat_id, encrypted_chat_key, is_incognito, message: {message_id, role, content, created_at, chat_has_title}} | `chat_message_confirmed` (not `synced`), `ai_task_initiated` or `message_queued` naming the message | `error` naming the chat |
/// | delete a message | `delete_message` {chatId, messageId} | `message_deleted` naming it | `error` naming the chat |
/// | pin / unpin | `update_chat` {chat_id, pinned}, then a `ping` | the `pong` answering that ping, with no `error` naming the chat before it | `error` naming the chat |
/// | hide / unhide | `encrypted_chat_metadata` {chat_id, encrypted_chat_key re-wrapped, allow_chat_key_rotation, chat_key_rotation_reason: "hidden_chat", versions} | `encrypted_metadata_stored` naming the chat and no message | `error` naming the chat, `chat_key_mismatch` |
///
/// The reference server answers a pin with nothing at all, so its success is inferred: a WebSocket delivers
/// frames in order and the server reads them in order, so a `pong` to a `ping` sent right after the
/// `update_chat` proves the server has read it; its handler has no refusal (an unknown chat is broadcast too),
/// so once read it is applied. An `error` naming the chat before that `pong` is taken as its refusal.
///
/// A refusal, no answer within ``Configuration/actionTimeout``, or a connection that ends first is one failed
/// try (counted durably); after ``Configuration/maximumActionTries`` the action leaves the queue, its local
/// effect is undone and ``Change/actionFailed(_:_:)`` carries the server's reason (also kept in
/// ``failedActions()``). Storing, deleting, pinning and hiding are idempotent on the server, so a resend after
/// a lost answer applies nothing twice. Asking the AI is not: it is sent again only when none of its
/// acknowledgements arrived (a lost connection or the deadline first), never after one did; a
/// `request_chat_history` answers it by resending it once with `message_history` (decrypted with the
/// decryptor the app set with ``setContentDecryptor(_:)``).
extension OpenMatesClient {
    /// Sends a user message: stored locally at once (it survives server content until acknowledged) and queued
    /// to be stored on the server (`encrypted_chat_metadata`, which never starts the AI). With `askAI`, the
    /// message's plaintext, the AI is also asked to answer it (`chat_message_added`), after the store, in the
    /// same transaction: both or neither are queued.
    ///
    /// - Returns: The store action (the AI request, when asked for, is queued right after it and announced on
    ///   its own).
    /// - Throws: ``OpenMatesError/store`` when the action could not be queued (nothing was changed),
    ///   ``OpenMatesError/actionFailed`` when the chat was deleted.
    @discardableResult
    public func sendMessage(
        chatID: String, messageID: String, encryptedContent: String, createdAt: Int, askAI plaintext: String? = nil
    ) async throws(OpenMatesError) -> OpenMatesPendingAction {
        let message = OpenMatesWireMessage(
            messageID: messageID, chatID: chatID, role: "user", createdAt: createdAt,
            raw: ["encrypted_content": .string(encryptedContent)])
        let store = OpenMatesPendingAction(
            kind: .storeMessage, chatID: chatID,
            payload: [
                "message_id": .string(messageID), "encrypted_content": .string(encryptedContent),
                "created_at": .int(Int64(createdAt)),
            ])
        var actions = [store]
        if let plaintext {
            actions.append(
                OpenMatesPendingAction(
                    kind: .askAI, chatID: chatID,
                    payload: [
                        "message_id": .string(messageID), "content": .string(plaintext),
                        "created_at": .int(Int64(createdAt)),
                    ]))
        }
        return try await queue(
            actions, [.mergeMessages(chatID: chatID, messages: [message], messagesV: nil, serverMessageCount: nil)])
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
        return try await queue([action], [.deleteMessage(chatID: chatID, messageID: messageID)])
    }

    /// Pins or unpins a chat locally at once and replays it (`update_chat` {chat_id, pinned}).
    ///
    /// - Throws: ``OpenMatesError/store`` when the action could not be queued, ``OpenMatesError/actionFailed``
    ///   when the chat was deleted.
    @discardableResult
    public func setPinned(_ pinned: Bool, chatID: String) async throws(OpenMatesError) -> OpenMatesPendingAction {
        try await queueFlag(.pin, payload: ["pinned": .bool(pinned)], value: pinned, chatID: chatID) { chat, _ in
            chat.pinned = pinned
        }
    }

    /// Hides or unhides a chat: the chat key is re-wrapped on the device — under `unlock`'s secret to hide, under
    /// `masterKey` to unhide — stored locally at once with the flag, and replayed as `encrypted_chat_metadata`
    /// with `allow_chat_key_rotation: true` (the reference server has no hidden flag: a chat is hidden because
    /// its key does not open with the master key). The current key is opened with whichever of the two keys
    /// opens it; the new wrapping is made once, so every resend carries the same bytes.
    ///
    /// - Throws: ``OpenMatesError/actionFailed`` when the chat is deleted, not stored, has no key, or its key
    ///   opens with neither key (nothing is queued); ``OpenMatesError/store``.
    @discardableResult
    public func setHidden(
        _ hidden: Bool, chatID: String, masterKey: TidingsCrypto.SymmetricKey, unlock: OpenMatesHiddenChatUnlock
    ) async throws(OpenMatesError) -> OpenMatesPendingAction {
        let stored: OpenMatesChat?
        do { stored = try store.chat(chatID)?.chat } catch {
            throw OpenMatesError(.store, operation: "hide", detail: "\(error)")
        }
        func refuse(_ detail: String) -> OpenMatesError {
            OpenMatesError(.actionFailed, operation: "hide", detail: detail, chatIDs: [chatID])
        }
        guard let stored, let wrapped = stored.encryptedChatKey else {
            throw refuse("the chat's key is not on this device")
        }
        let chatKey: TidingsCrypto.SymmetricKey
        if let key = try? OpenMatesChatKeyWrap.unwrap(wrapped, masterKey: masterKey) {
            chatKey = key
        } else if let key = try? unlock.unwrap(wrapped) {
            chatKey = key
        } else {
            throw refuse("the chat's key opens with neither the master key nor the hide secret")
        }
        let rewrapped: String
        do {
            rewrapped = hidden ? try unlock.wrap(chatKey) : try OpenMatesChatKeyWrap.wrap(chatKey, masterKey: masterKey)
        } catch { throw refuse("the key could not be wrapped: \(error)") }
        return try await queueFlag(
            .hide, payload: ["encrypted_chat_key": .string(rewrapped)], value: hidden, chatID: chatID,
            keyBefore: wrapped
        ) { chat, _ in
            chat.hidden = hidden
            chat.encryptedChatKey = rewrapped
        }
    }

    /// Sets (or, with nil, forgets) the decryptor used to answer the server's `request_chat_history` for an AI
    /// request: the chat's stored messages are decrypted in memory and sent as `message_history`. It is held in
    /// memory only. Without one, such a request counts as a failed try of the AI request.
    public func setContentDecryptor(_ decryptor: OpenMatesContentDecryptor?) {
        contentDecryptor = decryptor
    }

    private func queueFlag(
        _ kind: OpenMatesPendingAction.Kind, payload wire: [String: JSONValue], value: Bool, chatID: String,
        keyBefore: String? = nil, set: (inout OpenMatesChat, Bool) -> Void
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
        var payload = wire
        payload[OpenMatesPendingAction.valueKey] = .bool(value)
        if var chat = stored {
            // The value before the first queued action on this flag: a later action's "before" is only the
            // earlier action's wish, which the server may refuse.
            let current = kind == .pin ? chat.pinned : chat.hidden
            let before = earlier?.payload.omBool(OpenMatesPendingAction.valueBeforeKey) ?? current
            payload[OpenMatesPendingAction.valueBeforeKey] = .bool(before)
            if let keyBefore {
                payload[OpenMatesPendingAction.keyBeforeKey] =
                    earlier?.payload[OpenMatesPendingAction.keyBeforeKey] ?? .string(keyBefore)
            }
            set(&chat, value)
            changes.append(.upsertChat(chat))
        }
        return try await queue([OpenMatesPendingAction(kind: kind, chatID: chatID, payload: payload)], changes)
    }

    private func queue(_ actions: [OpenMatesPendingAction], _ changes: [OpenMatesStoreChange])
        async throws(OpenMatesError) -> OpenMatesPendingAction
    {
        let queued: [OpenMatesPendingAction]
        guard let first = actions.first else { throw OpenMatesError(.actionFailed, detail: "no action") }
        do {
            // A deleted chat stays deleted: no action on it is queued. A chat not stored gets no local effect
            // (no orphan rows); the server decides.
            let view = try store.localView()
            guard !view.tombstones.contains(first.chatID) else {
                throw OpenMatesError(
                    .actionFailed, operation: first.kind.rawValue, detail: "the chat was deleted",
                    chatIDs: [first.chatID])
            }
            queued = try store.enqueue(actions, applying: view.chats[first.chatID] == nil ? [] : changes)
        } catch let error as OpenMatesError {
            throw error
        } catch {
            throw OpenMatesError(.store, operation: first.kind.rawValue, detail: "\(error)")
        }
        broadcaster.publish(.storeChanged)
        await replayNextAction()
        return queued[0]
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

    /// Sends the oldest queued action when connected and none is in flight; an action no event can carry (an
    /// archive, or a hide queued by an older version without its re-wrapped key) fails at once, explicitly.
    func replayNextAction() async {
        while actionInFlight == nil, let open = channel, !stopped {
            let next: OpenMatesPendingAction?
            do { next = try store.pendingActions().first } catch {
                broadcaster.publish(.failure(OpenMatesError(.store, operation: "pendingActions", detail: "\(error)")))
                return
            }
            guard let next else { return }
            if let reason = Self.unsendable(next) {
                abandon(next, reason: reason)
                continue
            }
            actionInFlight = next.id
            let timeout = configuration.actionTimeout
            actionTimeoutTask = Task { [clock] in
                do { try await clock.sleep(for: timeout) } catch { return }
                await self.actionTimedOut(next.id)
            }
            await send(.action(wireForm(of: next)), on: open)
            if next.kind == .pin, actionInFlight == next.id {
                // The pongs still owed for pings sent before (a keepalive's, an earlier try's), then this one's.
                actionPongsAwaited = pingsUnanswered + 1
                await send(.ping, on: open)
            }
            return
        }
    }

    /// Why an action cannot be sent to the reference server, or nil.
    static func unsendable(_ action: OpenMatesPendingAction) -> String? {
        if action.kind == OpenMatesPendingAction.Kind.legacyArchiveChat {
            return "archiving does not exist on the server"
        }
        guard OpenMatesClientRequest.eventType(of: action.kind) != nil else {
            return "\(action.kind) is not an action this version can send"
        }
        if action.kind == .hide, action.payload["encrypted_chat_key"] == nil {
            return "queued by an earlier version without the re-wrapped chat key: hide or unhide it again"
        }
        return nil
    }

    /// The action with what the server wants from the store at send time: the chat's current wrapped key and
    /// versions (a store or a hide), whether it has a title and its parent (an AI request).
    func wireForm(of action: OpenMatesPendingAction) -> OpenMatesPendingAction {
        guard let chat = try? store.chat(action.chatID)?.chat else { return action }
        var wire = action
        let versions: JSONValue = [
            "messages_v": .int(Int64(chat.versions.messagesV + (action.kind == .storeMessage ? 1 : 0))),
            "title_v": .int(Int64(chat.versions.titleV)),
            "last_edited_overall_timestamp": .int(Int64(max(chat.lastEdited, action.payload.omInt("created_at") ?? 0))),
        ]
        switch action.kind {
        case .storeMessage:
            // The key the server holds (its last record, or this device's acknowledged hide), not a pending
            // hide's re-wrapping, which the server would refuse as `chat_key_mismatch`.
            if wire.payload["encrypted_chat_key"] == nil,
                let key = chat.details.omString("encrypted_chat_key") ?? chat.encryptedChatKey
            {
                wire.payload["encrypted_chat_key"] = .string(key)
            }
            wire.payload["versions"] = versions
        case .hide: wire.payload["versions"] = versions
        case .askAI:
            if let key = chat.details.omString("encrypted_chat_key") ?? chat.encryptedChatKey {
                wire.payload["encrypted_chat_key"] = .string(key)
            }
            if let parent = chat.parentChatID { wire.payload["parent_id"] = .string(parent) }
            wire.payload["chat_has_title"] = .bool(chat.encryptedTitle != nil)
        default: break
        }
        return wire
    }

    private func actionTimedOut(_ id: Int64) async {
        guard actionInFlight == id, !stopped else { return }
        await actionTryEnded(reason: "the server did not answer")
        await replayNextAction()
    }

    /// A `pong` arrived: the pin in flight succeeds once the pong answering its own ping is here.
    func actionPongArrived() async {
        guard actionPongsAwaited > 0, let id = actionInFlight else { return }
        actionPongsAwaited -= 1
        guard actionPongsAwaited == 0,
            let action = (try? store.pendingActions())?.first(where: { $0.id == id })
        else { return }
        await acknowledgeInFlight(action)
    }

    /// Acknowledges, refuses or answers (`request_chat_history`) the action in flight when `event` concerns it.
    func settleActionInFlight(envelope: OpenMatesEnvelope, event: OpenMatesServerEvent) async {
        guard let id = actionInFlight,
            let action = (try? store.pendingActions())?.first(where: { $0.id == id })
        else { return }
        if let reason = Self.refusal(envelope, event, action) {
            await actionTryEnded(reason: reason)
            await replayNextAction()
            return
        }
        if case .actionReply(let reply) = event, reply.type == "request_chat_history", action.kind == .askAI,
            reply.chatID == action.chatID
        {
            await resendWithHistory(action)
            return
        }
        guard Self.confirms(event, action) else { return }
        await acknowledgeInFlight(action)
    }

    private func acknowledgeInFlight(_ action: OpenMatesPendingAction) async {
        finishInFlight()
        do {
            // The server now holds the re-wrapped key; it answers the acting device without it. Written with the
            // acknowledgement, in one transaction: a hide that left the queue while its key failed to be written
            // would be announced by nobody.
            var changes: [OpenMatesStoreChange] = []
            if action.kind == .hide, let key = action.payload.omString("encrypted_chat_key"),
                var chat = try store.chat(action.chatID)?.chat
            {
                chat.details["encrypted_chat_key"] = .string(key)
                changes.append(.upsertChat(chat))
            }
            try store.acknowledge(action.id, applying: changes)
        } catch {
            broadcaster.publish(.failure(OpenMatesError(.store, operation: "acknowledge", detail: "\(error)")))
            return
        }
        broadcaster.publish(.actionSucceeded(action))
        await replayNextAction()
    }

    /// Answers `request_chat_history` once per try: the AI request again, with the chat's other stored messages
    /// decrypted in memory. The server started nothing when it asked, so this resend cannot answer twice.
    private func resendWithHistory(_ action: OpenMatesPendingAction) async {
        guard !historyResent, let open = channel else { return }
        guard let decryptor = contentDecryptor,
            let chat = try? store.chat(action.chatID)?.chat,
            let messages = try? store.messages(chatID: action.chatID)
        else {
            await actionTryEnded(reason: "the server asked for the chat's history and no decryptor was set")
            await replayNextAction()
            return
        }
        historyResent = true
        let history: [JSONValue] = decryptor.decrypt(messages, of: chat).compactMap { decrypted in
            guard decrypted.message.messageID != action.messageID, case .success(let text) = decrypted.content
            else { return nil }
            return [
                "message_id": .string(decrypted.message.messageID), "role": .string(decrypted.message.role),
                "content": .string(text), "created_at": .int(Int64(decrypted.message.createdAt)),
            ]
        }
        var wire = wireForm(of: action)
        wire.payload["message_history"] = .array(history)
        await send(.action(wire), on: open)
    }

    /// The server's reason when `event` refuses `action`: an `error` naming its chat (the form of the reference
    /// server's handlers, `{message, chat_id}`), or `chat_key_mismatch` / `incomplete_chat_metadata` naming its
    /// chat (and its message, when both name one) for a store or a hide. An `error` naming no chat is left to the
    /// deadline: nothing ties it to the action.
    static func refusal(_ envelope: OpenMatesEnvelope, _ event: OpenMatesServerEvent, _ action: OpenMatesPendingAction)
        -> String?
    {
        if envelope.type == "error", refuses(envelope.payload, chatID: action.chatID) {
            return envelope.payload.omString("message") ?? "refused by the server"
        }
        guard case .actionReply(let reply) = event, reply.isRefusal, reply.chatID == action.chatID,
            action.kind == .storeMessage || action.kind == .hide
        else { return nil }
        if let named = reply.messageID, let own = action.messageID, named != own { return nil }
        return "\(reply.type): \(reply.message ?? "refused by the server")"
    }

    /// Whether an `error` payload names the action's chat. Only one action is in flight, so such an error is
    /// about it or about another request on the same chat; taking the latter for a refusal costs one try and an
    /// idempotent resend, while leaving every refusal to the deadline would hide the server's reason.
    static func refuses(_ payload: [String: JSONValue], chatID: String) -> Bool {
        payload.omID("chat_id") == chatID
    }

    static func confirms(_ event: OpenMatesServerEvent, _ action: OpenMatesPendingAction) -> Bool {
        switch (action.kind, event) {
        case (.deleteMessage, .messageDeleted(let chatID, let messageID, _)):
            return chatID == action.chatID && messageID == action.messageID
        case (.pin, .chatPinnedUpdated(let chatID, let pinned)):
            // Not sent to the acting device by the reference server; a server that does echo settles it sooner.
            return chatID == action.chatID && pinned == action.flagValue
        case (.storeMessage, .actionReply(let reply)):
            return reply.type == "encrypted_metadata_stored" && reply.chatID == action.chatID
                && reply.messageID == action.messageID
        case (.hide, .actionReply(let reply)):
            return reply.type == "encrypted_metadata_stored" && reply.chatID == action.chatID && reply.messageID == nil
        case (.askAI, .actionReply(let reply)):
            let acknowledges =
                (reply.type == "chat_message_confirmed" && reply.status != "synced")
                || reply.type == "ai_task_initiated" || reply.type == "message_queued"
            return acknowledges && (reply.chatID ?? action.chatID) == action.chatID
                && reply.messageID == action.messageID
        default: return false
        }
    }

    func finishInFlight() {
        actionInFlight = nil
        actionPongsAwaited = 0
        historyResent = false
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
            abandon(action, reason: "\(reason) (\(action.tries) tries)")
        } catch {
            broadcaster.publish(.failure(OpenMatesError(.store, operation: "recordFailure", detail: "\(error)")))
        }
    }

    /// Fails an action for good: it leaves the queue, its local effect is undone, the failure is kept and
    /// announced. A message that could not be stored takes its queued AI request with it (the AI would answer a
    /// message the server does not have).
    func abandon(_ action: OpenMatesPendingAction, reason: String) {
        do {
            let failed = OpenMatesFailedAction(action: action, reason: reason)
            try store.abandon(action, reason: failed.reason)
            broadcaster.publish(.storeChanged)
            broadcaster.publish(.actionFailed(action, failed.error))
            guard action.kind == .storeMessage, let messageID = action.messageID else { return }
            for ask in try store.pendingActions() where ask.kind == .askAI && ask.messageID == messageID {
                abandon(ask, reason: "its message could not be stored: \(reason)")
            }
        } catch {
            broadcaster.publish(.failure(OpenMatesError(.store, operation: "abandon", detail: "\(error)")))
        }
    }
}
