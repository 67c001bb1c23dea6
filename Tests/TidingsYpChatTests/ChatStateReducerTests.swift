import Foundation
import Testing
import TidingsYpChat

/// `ChatState.reduce`, event by event: each test starts from a known state and checks exactly what
/// one event changes.
@Suite(.timeLimit(.minutes(1))) struct ChatStateReducerTests {
    static let anna = YpChatUser(userName: "anna", gender: "w", age: 30, country: "DE")
    static let profile = ChatProfile(userName: "anna", gender: "w", age: 30, country: "DE")

    /// Logged in as anna, conversation with bob open.
    static func chatting() -> ChatState {
        var state = ChatState.reduce(ChatState(), .socket(.loginSuccess(anna)))
        state = ChatState.reduce(state, .action(.openConversation("bob")))
        return state
    }

    static func reduce(_ state: ChatState, _ events: ChatEvent...) -> ChatState {
        events.reduce(state, ChatState.reduce)
    }

    @Test func loginValidatesSavesTheProfileAndWaitsForLoginSuccess() {
        let short = ChatState.reduce(
            ChatState(), .action(.login(ChatProfile(userName: " ab ", gender: "w", age: 30, country: "DE"))))
        #expect(short.errorMessage == .key(.errorNicknameTooShort))
        #expect(!short.loading.login)
        #expect(short.savedProfile == nil)
        #expect(
            ChatState.reduce(
                ChatState(), .action(.login(ChatProfile(userName: "anna", gender: "x", age: 30, country: "DE")))
            )
            .errorMessage == .key(.errorGenderMissing))
        #expect(
            ChatState.reduce(
                ChatState(), .action(.login(ChatProfile(userName: "anna", gender: "w", age: 17, country: "DE")))
            )
            .errorMessage == .key(.errorAgeOutOfRange))
        #expect(
            ChatState.reduce(
                ChatState(), .action(.login(ChatProfile(userName: "anna", gender: "w", age: 30, country: "")))
            )
            .errorMessage == .key(.errorCountryMissing))

        let started = ChatState.reduce(short, .action(.login(Self.profile)))
        #expect(started.loading.login)
        #expect(started.savedProfile == Self.profile)
        #expect(started.errorMessage == nil)
        #expect(!started.isLoggedIn)
        let done = ChatState.reduce(started, .socket(.loginSuccess(Self.anna)))
        #expect(done.currentUser == Self.anna)
        #expect(!done.loading.login)
        #expect(done.timeoutRemaining == 1_800)
    }

    @Test func aTextMessageIsPendingUntilMessageSentWithItsID() {
        let outgoing = ChatOutgoingMessage(messageId: "m-1", toUserName: "bob", text: "Hallo")
        let pending = ChatState.reduce(Self.chatting(), .action(.send(outgoing)))
        #expect(pending.conversationMessages.map(\.status) == [.pending])
        #expect(pending.conversationMessages.first?.message.fromUserName == "anna")
        #expect(ChatState.reduce(pending, .socket(.messageSent(messageId: "other"))) == pending)
        let sent = ChatState.reduce(pending, .socket(.messageSent(messageId: "m-1")))
        #expect(sent.conversationMessages.map(\.status) == [.sent])
    }

    @Test func anErrorFailsPendingMessagesAndSetsTheErrorMessage() {
        let pending = ChatState.reduce(
            Self.chatting(), .action(.send(ChatOutgoingMessage(messageId: "m-1", toUserName: "bob", text: "x"))))
        let failed = ChatState.reduce(pending, .socket(.error("unknown user bob")))
        #expect(failed.conversationMessages.map(\.status) == [.failed])
        #expect(failed.errorMessage == .server("unknown user bob"))
        // The server's confirmation still wins when it comes after all.
        #expect(
            ChatState.reduce(failed, .socket(.messageSent(messageId: "m-1"))).conversationMessages.map(\.status)
                == [.sent])
        let connectError = ChatState.reduce(Self.chatting(), .socket(.connectError("refused")))
        #expect(connectError.errorMessage == .key(.errorConnection))
        #expect(connectError.connection == .disconnected)
        #expect(ChatState.reduce(connectError, .action(.dismissError)).errorMessage == nil)
    }

    @Test func incomingMessagesGoToTheOpenConversationOnly() {
        let fromBob = YpChatMessage(messageId: "b-1", fromUserName: "bob", toUserName: "anna", text: "hi")
        let fromCem = YpChatMessage(messageId: "c-1", fromUserName: "cem", toUserName: "anna", text: "yo")
        let state = Self.reduce(Self.chatting(), .socket(.message(fromBob)), .socket(.message(fromCem)))
        #expect(state.conversationMessages == [ChatMessageItem(id: "b-1", message: fromBob, status: .received)])
        // The same message twice is shown once.
        #expect(ChatState.reduce(state, .socket(.message(fromBob))) == state)
        // The server's conversation replaces the list and keeps what is still pending.
        let pending = ChatState.reduce(
            state, .action(.send(ChatOutgoingMessage(messageId: "m-2", toUserName: "bob", text: "later"))))
        let mine = YpChatMessage(messageId: "m-1", fromUserName: "anna", toUserName: "bob", text: "earlier")
        let loaded = ChatState.reduce(pending, .socket(.conversation(withUserName: "bob", messages: [mine, fromBob])))
        #expect(loaded.conversationMessages.map(\.id) == ["m-1", "b-1", "m-2"])
        #expect(loaded.conversationMessages.map(\.status) == [.sent, .received, .pending])
        // Another partner's conversation does not replace the open one.
        #expect(ChatState.reduce(loaded, .socket(.conversation(withUserName: "cem", messages: [fromCem]))) == loaded)
        let closed = ChatState.reduce(loaded, .action(.closeConversation))
        #expect(closed.openConversation == nil)
        #expect(closed.conversationMessages.isEmpty)
    }

    @Test func listsAndTheirLoadingFlags() {
        var state = Self.chatting()
        state = ChatState.reduce(state, .action(.search(YpChatSearchQuery(nameIncludes: "b"))))
        #expect(state.loading.search)
        state = ChatState.reduce(state, .socket(.searchResults([YpChatUser(userName: "bob")])))
        #expect(!state.loading.search)
        #expect(state.searchResults == [YpChatUser(userName: "bob")])
        state = Self.reduce(state, .action(.requestInbox), .action(.requestHistory))
        #expect(state.loading.inbox && state.loading.history)
        let line = YpChatConversationSummary(userName: "bob", lastMessage: "hi", unreadCount: 2)
        state = Self.reduce(state, .socket(.inboxResults([line])), .socket(.unreadChats(1)))
        #expect(state.inbox == [line])
        #expect(!state.loading.inbox)
        #expect(state.unreadChatsCount == 1)
        #expect(YpChatTab.inbox.badge(in: state) == 1)
        #expect(YpChatTab.history.badge(in: state) == nil)
        state = ChatState.reduce(state, .socket(.historyResults([line])))
        #expect(state.history == [line])
        #expect(!state.loading.history)
        state = ChatState.reduce(state, .socket(.userList([Self.anna, YpChatUser(userName: "bob")])))
        #expect(state.onlineUsers.map(\.userName) == ["anna", "bob"])
        state = ChatState.reduce(state, .socket(.userBlocked("bob")))
        #expect(state.blockedUsers == ["bob"])
        state = ChatState.reduce(state, .socket(.userUnblocked("bob")))
        #expect(state.blockedUsers.isEmpty)
    }

    @Test func consoleCommandsFillLinesAndTable() {
        var state = ChatState.reduce(Self.chatting(), .action(.command("/help", messageId: "c-1")))
        #expect(state.consoleLines == [.input("/help")])
        #expect(state.consoleAwaitsReply)
        state = ChatState.reduce(state, .socket(.commandResult("Befehle:\n/help")))
        #expect(state.consoleLines == [.input("/help"), .output("Befehle:"), .output("/help")])
        #expect(!state.consoleAwaitsReply)
        let table = YpChatCommandTable(columns: ["userName"], rows: [["anna"]])
        state = Self.reduce(state, .action(.command("/users", messageId: "c-2")), .socket(.commandTable(table)))
        #expect(state.commandTable == table)
        state = Self.reduce(state, .action(.command("/nope", messageId: "c-3")), .socket(.error("unknown command")))
        #expect(state.consoleLines.last == .error("unknown command"))
        #expect(state.errorMessage == .server("unknown command"))
        // A command is not a conversation message.
        #expect(state.conversationMessages.isEmpty)
        // A command that could not be sent leaves the console not waiting.
        state = Self.reduce(
            state, .action(.command("/help", messageId: "c-4")), .result(.failed(.emit, .key(.errorNotLoggedIn))))
        #expect(!state.consoleAwaitsReply)
        #expect(state.errorMessage == .key(.errorNotLoggedIn))
    }

    @Test func theTimeoutCountsDownOnlyWhileLoggedInAndOnlyActionsResetIt() {
        #expect(ChatState.reduce(ChatState(), .tick).timeoutRemaining == 1_800)
        var state = Self.chatting()
        state = Self.reduce(state, .tick, .tick, .tick)
        #expect(state.timeoutRemaining == 1_797)
        // Incoming events and results do not reset it.
        state = Self.reduce(
            state, .socket(.message(YpChatMessage(fromUserName: "bob", text: "hi"))), .socket(.unreadChats(3)),
            .result(.partnersLoaded([])), .socket(.userList([])))
        #expect(state.timeoutRemaining == 1_797)
        // Any action of the person does.
        state = ChatState.reduce(state, .action(.requestHistory))
        #expect(state.timeoutRemaining == 1_800)
        for _ in 0..<1_805 { state = ChatState.reduce(state, .tick) }
        #expect(state.timeoutRemaining == 0)
    }

    @Test func logoutResetsAllButTheSavedProfileAndCountries() {
        var state = ChatState.reduce(ChatState(), .action(.login(Self.profile)))
        state = ChatState.reduce(
            state, .result(.countriesLoaded(CountriesResponse(entries: [.init(code: "DE", name: "Deutschland")]))))
        state = Self.reduce(
            state, .socket(.loginSuccess(Self.anna)), .action(.openConversation("bob")), .socket(.unreadChats(2)),
            .result(.adminStatus(true)))
        let out = ChatState.reduce(state, .result(.loggedOut(.person)))
        var expected = ChatState()
        expected.savedProfile = Self.profile
        expected.countries = [.init(code: "DE", name: "Deutschland")]
        #expect(out == expected)
        let timedOut = ChatState.reduce(state, .result(.loggedOut(.inactivity)))
        #expect(timedOut.errorMessage == .key(.timeoutLoggedOut))
        #expect(!timedOut.isLoggedIn)
        // The server ended the login: the same reset, and the reason in the person's language with the
        // server's own words.
        let ended = ChatState.reduce(state, .result(.loggedOut(.server("logged out after 30 minutes"))))
        #expect(!ended.isLoggedIn)
        #expect(ended.savedProfile == Self.profile)
        #expect(ended.errorMessage == .localized(.sessionEndedByServer, arguments: ["logged out after 30 minutes"]))
        #expect(
            ended.errorMessage?.text(in: .english) == "The server ended your session: logged out after 30 minutes")
    }

    @Test func feedbackPartnersAndUpload() {
        var state = ChatState.reduce(ChatState(), .action(.loadFeedback))
        #expect(state.loading.feedback)
        state = ChatState.reduce(state, .result(.feedbackLoaded([FeedbackDto(id: "1", message: "gut")])))
        #expect(state.feedback.map(\.id) == ["1"])
        #expect(!state.loading.feedback)
        state = Self.reduce(state, .action(.adminLogin), .result(.adminStatus(true)))
        #expect(state.isFeedbackAdmin)
        #expect(state.feedbackMessage == .key(.adminLoggedIn))
        state = Self.reduce(state, .action(.deleteFeedback(id: "1")), .result(.feedbackDeleted(id: "1")))
        #expect(state.feedback.isEmpty)
        #expect(state.feedbackMessage == .key(.feedbackDeleted))
        state = Self.reduce(state, .action(.adminLogin), .result(.failed(.adminLogin, .server("wrong password"))))
        #expect(state.feedbackMessage == .server("wrong password"))
        #expect(state.errorMessage == nil)
        state = Self.reduce(state, .action(.loadPartners))
        #expect(state.loading.partners)
        state = ChatState.reduce(state, .result(.partnersLoaded([PartnerLinkDto(pageName: "P", url: "https://p")])))
        #expect(state.partners.count == 1)
        #expect(!state.loading.partners)

        let limit = 5 * 1024 * 1024
        let atLimit = ChatState.reduce(state, .action(.uploadImage(byteCount: limit, toUserName: "bob")))
        #expect(atLimit.upload == .uploading(byteCount: limit, toUserName: "bob"))
        #expect(atLimit.loading.upload)
        let over = ChatState.reduce(state, .action(.uploadImage(byteCount: limit + 1, toUserName: "bob")))
        #expect(over.upload == .failed)
        #expect(!over.loading.upload)
        #expect(over.errorMessage == .localized(.errorImageTooLarge, arguments: ["5"]))
        let done = ChatState.reduce(atLimit, .result(.imageUploaded(URL(string: "https://x/uploads/1")!)))
        #expect(done.upload == .idle)
        #expect(!done.loading.upload)
    }

    @Test func restoreSessionFlagsAndASessionThatIsLoggedIn() {
        var state = ChatState.reduce(ChatState(), .action(.restoreSession))
        #expect(state.loading.restoreSession && state.loading.countries)
        state = Self.reduce(
            state, .result(.profileLoaded(Self.profile)),
            .result(.sessionLoaded(SessionDto(loggedIn: true, userName: "anna"))),
            .result(.connecting))
        #expect(state.savedProfile == Self.profile)
        #expect(state.currentUser == YpChatUser(userName: "anna"))
        #expect(state.connection == .connecting)
        state = Self.reduce(state, .socket(.connect), .result(.restoreFinished))
        #expect(state.connection == .connected)
        #expect(!state.loading.restoreSession)
        #expect(ChatState.reduce(state, .socket(.disconnect("gone"))).connection == .disconnected)
    }

    @Test func unknownEventsAndMalformedPayloadsChangeNothing() {
        let state = Self.chatting()
        #expect(ChatState.reduce(state, .socket(.unknown("serverNotice"))) == state)
        #expect(ChatState.reduce(state, .socket(.malformed("message"))) == state)
        #expect(ChatState.reduce(state, .socket(.connected(socketId: "s"))) == state)
    }

    @Test func theStateHoldsNoAdminPassword() {
        let state = Self.reduce(Self.chatting(), .action(.adminLogin), .result(.adminStatus(true)))
        var dump = ""
        Swift.dump(state, to: &dump)
        #expect(!dump.lowercased().contains("password"))
    }
}
