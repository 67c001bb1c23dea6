extension ChatState {
    /// The state after `event`: the one place a ``ChatState`` changes.
    ///
    /// Pure: no clock, no I/O, no randomness (message ids come inside the events). Rules beyond the
    /// obvious assignments:
    /// - Every ``ChatEvent/action(_:)`` resets ``timeoutRemaining`` to ``inactivityTimeout`` while
    ///   logged in; socket events and results never do; ``ChatEvent/tick`` counts down to zero, only
    ///   while logged in.
    /// - A sent message is ``ChatDeliveryStatus/pending`` until `messageSent` with its id; an `error`
    ///   marks every pending message failed (the server answers in order and names no id), and a later
    ///   `messageSent` still confirms it.
    /// - `error` and `connect_error` set ``errorMessage``; an `error` while a command waits also goes
    ///   to the console.
    /// - Unknown events and malformed payloads change nothing.
    public static func reduce(_ state: ChatState, _ event: ChatEvent) -> ChatState {
        var next = state
        switch event {
        case .action(let action):
            if next.isLoggedIn { next.timeoutRemaining = inactivityTimeout }
            next.apply(action)
        case .result(let result): next.apply(result)
        case .socket(let socketEvent): next.apply(socketEvent)
        case .tick:
            if next.isLoggedIn { next.timeoutRemaining = max(0, next.timeoutRemaining - 1) }
        }
        return next
    }

    private mutating func apply(_ action: ChatAction) {
        switch action {
        case .restoreSession:
            loading.restoreSession = true
            loading.countries = true
        case .login(let profile):
            if let problem = profile.validationError {
                errorMessage = .key(problem)
                loading.login = false
            } else {
                savedProfile = profile
                errorMessage = nil
                loading.login = true
            }
        case .logout: break
        case .openConversation(let partner):
            if openConversation != partner { conversationMessages = [] }
            openConversation = partner
        case .closeConversation:
            openConversation = nil
            conversationMessages = []
        case .send(let outgoing):
            guard outgoing.toUserName == openConversation else { break }
            let message = YpChatMessage(
                messageId: outgoing.messageId, fromUserName: currentUser?.userName ?? "",
                toUserName: outgoing.toUserName, text: outgoing.text, isImage: outgoing.imageURL != nil,
                imageUrl: outgoing.imageURL?.absoluteString)
            conversationMessages.append(ChatMessageItem(id: outgoing.messageId, message: message, status: .pending))
        case .command(let text, _):
            consoleLines.append(.input(text))
            consoleAwaitsReply = true
        case .search: loading.search = true
        case .requestInbox: loading.inbox = true
        case .requestHistory: loading.history = true
        case .block, .unblock: break
        case .loadFeedback, .sendFeedback, .adminLogin, .adminLogout, .deleteFeedback:
            loading.feedback = true
            feedbackMessage = nil
        case .loadPartners: loading.partners = true
        case .uploadImage(let byteCount, let partner):
            if byteCount > YpChatRESTClient.maximumImageBytes {
                upload = .failed
                errorMessage = .localized(.errorImageTooLarge, arguments: ["5"])
            } else {
                upload = .uploading(byteCount: byteCount, toUserName: partner)
                loading.upload = true
            }
        case .dismissError: errorMessage = nil
        case .dismissFeedbackMessage: feedbackMessage = nil
        }
    }

    private mutating func apply(_ result: ChatResult) {
        switch result {
        case .profileLoaded(let profile): savedProfile = profile
        case .countriesLoaded(let response):
            countries = response.entries
            loading.countries = false
        case .adminStatus(let isAdmin):
            if isAdmin != isFeedbackAdmin, loading.feedback {
                feedbackMessage = .key(isAdmin ? .adminLoggedIn : .adminLoggedOut)
            }
            isFeedbackAdmin = isAdmin
            loading.feedback = false
        case .sessionLoaded(let session):
            if session.loggedIn, let name = session.userName, currentUser == nil {
                currentUser = YpChatUser(userName: name)
                timeoutRemaining = Self.inactivityTimeout
            }
        case .restoreFinished: loading.restoreSession = false
        case .connecting: connection = .connecting
        case .feedbackLoaded(let entries):
            feedback = entries
            loading.feedback = false
        case .feedbackSent:
            loading.feedback = false
            feedbackMessage = .key(.feedbackSent)
        case .feedbackDeleted(let id):
            feedback.removeAll { $0.id == id }
            loading.feedback = false
            feedbackMessage = .key(.feedbackDeleted)
        case .partnersLoaded(let links):
            partners = links
            loading.partners = false
        case .imageUploaded:
            upload = .idle
            loading.upload = false
        case .failed(let operation, let notice): fail(operation, notice)
        case .loggedOut(let reason):
            self = loggedOut()
            switch reason {
            case .person: break
            case .inactivity: errorMessage = .key(.timeoutLoggedOut)
            case .server(let text): errorMessage = .localized(.sessionEndedByServer, arguments: [text])
            }
        }
    }

    private mutating func fail(_ operation: ChatOperation, _ notice: YpChatNotice) {
        if operation.isFeedback {
            loading.feedback = false
            feedbackMessage = notice
            return
        }
        errorMessage = notice
        switch operation {
        case .restoreSession, .connect: loading.restoreSession = false
        case .login: loading.login = false
        case .countries: loading.countries = false
        case .partners: loading.partners = false
        case .upload:
            loading.upload = false
            upload = .failed
        case .emit:
            loading.search = false
            loading.inbox = false
            loading.history = false
            consoleAwaitsReply = false
            failPendingMessages()
        default: break
        }
    }

    private mutating func apply(_ event: YpChatSocketEvent) {
        switch event {
        case .connect: connection = .connected
        case .disconnect: connection = .disconnected
        case .connectError:
            connection = .disconnected
            errorMessage = .key(.errorConnection)
            loading.login = false
        case .connected: break
        case .loginSuccess(let user):
            if currentUser?.userName != user.userName { timeoutRemaining = Self.inactivityTimeout }
            currentUser = user
            loading.login = false
            errorMessage = nil
        case .userList(let users): onlineUsers = users
        case .message(let message): receive(message)
        case .messageSent(let id):
            if let index = conversationMessages.firstIndex(where: { $0.id == id }) {
                conversationMessages[index].status = .sent
            }
        case .conversation(let partner, let messages):
            guard partner == openConversation else { break }
            let me = currentUser?.userName
            var items = messages.enumerated().map { offset, message in
                ChatMessageItem(
                    id: message.messageId ?? "server-\(offset)", message: message,
                    status: message.fromUserName == me ? .sent : .received)
            }
            let known = Set(items.map(\.id))
            items += conversationMessages.filter { $0.status != .received && !known.contains($0.id) }
            conversationMessages = items
        case .searchResults(let users):
            searchResults = users
            loading.search = false
        case .historyResults(let lines):
            history = lines
            loading.history = false
        case .inboxResults(let lines):
            inbox = lines
            loading.inbox = false
        case .unreadChats(let count): unreadChatsCount = count
        case .userBlocked(let user): blockedUsers.insert(user)
        case .userUnblocked(let user): blockedUsers.remove(user)
        case .commandResult(let text):
            consoleLines += text.split(separator: "\n", omittingEmptySubsequences: false).map { .output(String($0)) }
            consoleAwaitsReply = false
        case .commandTable(let table):
            commandTable = table
            consoleAwaitsReply = false
        case .error(let text):
            errorMessage = .server(text)
            if consoleAwaitsReply {
                consoleLines.append(.error(text))
                consoleAwaitsReply = false
            }
            loading.login = false
            loading.search = false
            failPendingMessages()
        case .unknown, .malformed: break
        }
    }

    private mutating func receive(_ message: YpChatMessage) {
        guard let partner = openConversation else { return }
        let me = currentUser?.userName
        let fromPartner = message.fromUserName == partner && (message.toUserName == nil || message.toUserName == me)
        let fromMeToPartner = message.fromUserName == me && message.toUserName == partner
        guard fromPartner || fromMeToPartner else { return }
        if let id = message.messageId, conversationMessages.contains(where: { $0.id == id }) { return }
        let id = message.messageId ?? "received-\(conversationMessages.count)"
        conversationMessages.append(
            ChatMessageItem(id: id, message: message, status: fromPartner ? .received : .sent))
    }

    private mutating func failPendingMessages() {
        for index in conversationMessages.indices where conversationMessages[index].status == .pending {
            conversationMessages[index].status = .failed
        }
    }
}
