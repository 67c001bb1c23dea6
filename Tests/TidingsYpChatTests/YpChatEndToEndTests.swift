import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsNet
import TidingsSandbox
import TidingsSandboxKit
import TidingsYpChat

/// `YpChatRepository` and `ChatState` over the real wire, against the Swift sandbox on loopback and
/// against the python-socketio peer: the same tests, the same expectations.
@Suite(.timeLimit(.minutes(1))) struct YpChatEndToEndTests {
    @Test(arguments: ChatBackend.allCases)
    func restoreSessionLoginAndTwoClientsExchangeMessages(_ backend: ChatBackend) async throws {
        let server = try await ChatServerUnderTest.start(backend)
        defer { server.stop() }
        let anna = try server.repository()
        await anna.restoreSession()
        var state = await anna.state
        #expect(state.countries.map(\.code) == ["DE", "AT", "CH", "BE"])
        #expect(!state.loading.restoreSession && !state.loading.countries)
        #expect(state.connection != .disconnected)
        #expect(!state.isLoggedIn)
        try await until(anna) { $0.connection == .connected }

        await anna.login(ChatProfile(userName: "anna", gender: "w", age: 30, country: "DE"))
        try await until(anna) { $0.currentUser?.userName == "anna" }
        // One socket, one setSessionId (before the login on the same connection), with the session's id.
        let sessionID = try #require(try await anna.rest.session().sessionId)
        #expect(try await server.sessionIDsReceived() == [sessionID])
        let bob = try await loggedIn("bob", on: server, age: 40, country: "AT", gender: "m")
        try await until(anna) { $0.onlineUsers.map(\.userName) == ["anna", "bob"] }

        await anna.openConversation(with: "bob")
        await anna.send("Hallo Bob")
        state = try await until(anna) { $0.conversationMessages.last?.status == .sent }
        #expect(state.conversationMessages.map(\.message.text) == ["Hallo Bob"])
        let id = try #require(state.conversationMessages.first?.id)
        #expect(UUID(uuidString: id) != nil)

        // Bob has no conversation open: the message shows as an unread chat, then in the conversation.
        try await until(bob) { $0.unreadChatsCount == 1 }
        await bob.openConversation(with: "anna")
        state = try await until(bob) { !$0.conversationMessages.isEmpty }
        #expect(state.conversationMessages.map(\.message.text) == ["Hallo Bob"])
        #expect(state.conversationMessages.map(\.status) == [.received])
        await bob.send("Hallo Anna")
        state = try await until(anna) { $0.conversationMessages.count == 2 }
        #expect(state.conversationMessages.last?.message.fromUserName == "bob")
        #expect(state.conversationMessages.last?.status == .received)
        await anna.logout()
        await bob.logout()
    }

    @Test(arguments: ChatBackend.allCases)
    func searchInboxHistoryBlockAndUnblock(_ backend: ChatBackend) async throws {
        let server = try await ChatServerUnderTest.start(backend)
        defer { server.stop() }
        let anna = try await loggedIn("anna", on: server)
        let bob = try await loggedIn("bob", on: server, age: 40, country: "AT", gender: "m")
        await anna.search(
            YpChatSearchQuery(nameIncludes: "BO", minAge: 35, maxAge: 45, countries: ["AT"], genders: ["m"]))
        var state = try await until(anna) { !$0.loading.search }
        #expect(state.searchResults.map(\.userName) == ["bob"])
        await anna.search(YpChatSearchQuery(countries: ["CH"]))
        state = try await until(anna) { !$0.loading.search }
        #expect(state.searchResults.isEmpty)

        await bob.openConversation(with: "anna")
        await bob.send("eins")
        await bob.send("zwei")
        try await until(bob) { $0.conversationMessages.map(\.status) == [.sent, .sent] }
        await anna.requestInbox()
        state = try await until(anna) { !$0.loading.inbox }
        #expect(state.inbox == [YpChatConversationSummary(userName: "bob", lastMessage: "zwei", unreadCount: 2)])
        #expect(state.unreadChatsCount == 1)
        #expect(YpChatTab.inbox.badge(in: state) == 1)
        await anna.openConversation(with: "bob")
        try await until(anna) { $0.conversationMessages.count == 2 }
        await anna.requestHistory()
        state = try await until(anna) { !$0.loading.history }
        #expect(state.history == [YpChatConversationSummary(userName: "bob", lastMessage: "zwei", unreadCount: 0)])

        await anna.block("bob")
        try await until(anna) { $0.blockedUsers == ["bob"] }
        await bob.send("drei")  // dropped by the server: anna blocked bob
        try await until(bob) { $0.conversationMessages.count == 3 && $0.conversationMessages[2].status == .sent }
        await anna.unblock("bob")
        try await until(anna) { $0.blockedUsers.isEmpty }
        await bob.send("vier")
        state = try await until(anna) { $0.conversationMessages.count == 3 }
        #expect(state.conversationMessages.map(\.message.text) == ["eins", "zwei", "vier"])
    }

    @Test(arguments: ChatBackend.allCases)
    func consoleCommandsWithATableAndASlashInsideAConversation(_ backend: ChatBackend) async throws {
        let server = try await ChatServerUnderTest.start(backend)
        defer { server.stop() }
        let anna = try await loggedIn("anna", on: server)
        _ = try await loggedIn("bob", on: server, age: 40, country: "AT", gender: "m")
        await anna.send("/users")
        var state = try await until(anna) { $0.commandTable != nil }
        #expect(state.commandTable?.columns == ["userName", "age", "country"])
        #expect(state.commandTable?.rows == [["anna", "30", "DE"], ["bob", "40", "AT"]])
        await anna.send("/help")
        state = try await until(anna) { !$0.consoleAwaitsReply }
        #expect(state.consoleLines.contains(.output("Befehle: /help, /users, /whoami")))
        await anna.send("/nope")
        state = try await until(anna) { !$0.consoleAwaitsReply }
        #expect(state.consoleLines.last == .error("unknown command"))
        #expect(state.errorMessage == .server("unknown command"))

        // Inside a conversation a "/" text is still a console command: nothing reaches bob.
        await anna.openConversation(with: "bob")
        await anna.send("/whoami")
        state = try await until(anna) { !$0.consoleAwaitsReply }
        #expect(state.consoleLines.suffix(2) == [.output("anna"), .output("30 DE")])
        #expect(state.conversationMessages.isEmpty)
    }

    @Test(arguments: ChatBackend.allCases)
    func anImageIsUploadedSentAndFetchedWithTheSessionCookies(_ backend: ChatBackend) async throws {
        let server = try await ChatServerUnderTest.start(backend)
        defer { server.stop() }
        let anna = try await loggedIn("anna", on: server)
        let bob = try await loggedIn("bob", on: server, gender: "m")
        await anna.openConversation(with: "bob")
        await bob.openConversation(with: "anna")
        let image = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        await anna.sendImage(image, filename: "bild.png", contentType: "image/png")
        let sent = try await until(anna) { $0.conversationMessages.last?.status == .sent }
        let url = try #require(sent.conversationMessages.last?.message.imageUrl)
        #expect(url.hasPrefix(server.baseURL + "/uploads/"))  // the relative answer made absolute
        #expect(sent.upload == .idle)
        let received = try await until(bob) { $0.conversationMessages.last?.message.isImage == true }
        #expect(received.conversationMessages.last?.message.imageUrl == url)

        let cache = YpChatImageCache(rest: bob.rest)
        #expect(try await cache.image(at: try #require(URL(string: url))) == image)
        #expect(try await cache.image(at: try #require(URL(string: url))) == image)
        #expect(await cache.count == 1)
        if backend == .python {
            // The peer serves images to known sessions only: without cookies the fetch is refused.
            await #expect(throws: YpChatError.unauthorized) {
                try await server.restClient().fetchImage(try #require(URL(string: url)))
            }
        }
    }

    @Test func anImageOfExactlyFiveMebibytesIsSentAndOneByteMoreIsRefusedBeforeUploading() async throws {
        let server = try await ChatServerUnderTest.start(.sandbox)
        defer { server.stop() }
        let sandbox = try #require(server.sandbox)
        let anna = try await loggedIn("anna", on: server)
        _ = try await loggedIn("bob", on: server, gender: "m")
        await anna.openConversation(with: "bob")
        let limit = 5 * 1024 * 1024
        await anna.sendImage(Data(repeating: 0x42, count: limit + 1))
        var state = await anna.state
        #expect(state.upload == .failed)
        #expect(state.errorMessage == .localized(.errorImageTooLarge, arguments: ["5"]))
        #expect(sandbox.log.entries.filter { $0.path == "/api/upload-image" }.isEmpty)
        await anna.dismissError()
        await anna.sendImage(Data(repeating: 0x42, count: limit))
        state = try await until(anna) { $0.conversationMessages.last?.status == .sent }
        #expect(state.conversationMessages.last?.message.isImage == true)
        #expect(state.errorMessage == nil)
        #expect(sandbox.log.entries.filter { $0.path == "/api/upload-image" }.count == 1)
    }

    @Test(arguments: ChatBackend.allCases)
    func theInactivityTimeoutLogsOutOnTheVirtualClock(_ backend: ChatBackend) async throws {
        let server = try await ChatServerUnderTest.start(backend)
        defer { server.stop() }
        let clock = TestClock()
        let anna = try await loggedIn("anna", on: server, clock: clock)
        let bob = try await loggedIn("bob", on: server, gender: "m")
        #expect(await clock.waitForSleepers(1))
        await clock.advance(by: .seconds(100))
        try await until(anna) { $0.timeoutRemaining == 1_700 }

        // An incoming message does not reset the countdown; an action of the person does.
        await bob.openConversation(with: "anna")
        await bob.send("bist du da?")
        try await until(anna) { $0.unreadChatsCount == 1 }
        #expect(await anna.state.timeoutRemaining == 1_700)
        await anna.requestHistory()
        try await until(anna) { $0.timeoutRemaining == 1_800 && !$0.loading.history }

        await clock.advance(by: .seconds(1_799))
        try await until(anna) { $0.timeoutRemaining == 1 }
        #expect(await anna.state.isLoggedIn)
        await clock.advance(by: .seconds(1))
        let state = try await until(anna) { !$0.isLoggedIn }
        #expect(state.errorMessage == .key(.timeoutLoggedOut))
        #expect(state.savedProfile?.userName == "anna")
        // The server session ended too: bob sees anna gone (after his next list).
        try await until(bob) { !$0.onlineUsers.map(\.userName).contains("anna") }
        #expect(anna.rest.cookies.all.isEmpty)
        // No ticker is left running after the logout.
        await clock.advance(by: .seconds(10))
        #expect(clock.pendingSleepers == 0)
    }

    @Test(arguments: ChatBackend.allCases)
    func theServerLogsOutAUserSilentForThirtyMinutes(_ backend: ChatBackend) async throws {
        let serverClock = TestClock()
        let server = try await ChatServerUnderTest.start(
            backend, sandbox: YpChatSandboxServer(inactivityClock: serverClock))
        defer { server.stop() }
        let sandboxClock = backend == .sandbox ? serverClock : nil
        let anna = try await loggedIn("anna", on: server)
        let bob = try await loggedIn("bob", on: server, gender: "m")
        try await server.advanceInactivityClock(by: 1_000, sandboxClock: sandboxClock)
        await bob.requestHistory()  // bob is active; anna is not
        try await until(bob) { !$0.loading.history }
        try await server.advanceInactivityClock(by: 801, sandboxClock: sandboxClock)
        await bob.requestInbox()  // anna is 1,801 s silent now, bob 801 s
        let state = try await until(bob) { $0.onlineUsers.map(\.userName) == ["bob"] }
        #expect(state.errorMessage == nil)
        // Anna's app ends her session too (she cannot chat any more) and says why.
        let annaState = try await until(anna) { !$0.isLoggedIn }
        #expect(
            annaState.errorMessage
                == .localized(.sessionEndedByServer, arguments: ["logged out after 30 minutes without activity"]))
        #expect(annaState.connection == .disconnected)
        #expect(annaState.savedProfile?.userName == "anna")
        #expect(try await anna.rest.session().loggedIn == false)
    }

    @Test(arguments: ChatBackend.allCases)
    func anErrorWhileTheServerStillHasTheLoginKeepsTheSession(_ backend: ChatBackend) async throws {
        let server = try await ChatServerUnderTest.start(backend)
        defer { server.stop() }
        let anna = try await loggedIn("anna", on: server, clock: TestClock())
        try await server.inject("error", [["message": "try again later"]], toUser: "anna")
        let state = try await until(anna) { $0.errorMessage != nil }
        #expect(state.errorMessage == .server("try again later"))
        // The session check after the error found the login alive: a command still works.
        await anna.send("/whoami")
        let after = try await until(anna) { !$0.consoleAwaitsReply }
        #expect(after.isLoggedIn)
        #expect(after.consoleLines.contains(.output("anna")))
    }

    @Test func theTimeoutResetsTheStateEvenWhenLogoutFails() async throws {
        let server = try await ChatServerUnderTest.start(.sandbox)
        defer { server.stop() }
        let sandbox = try #require(server.sandbox)
        let clock = TestClock()
        let anna = try await loggedIn("anna", on: server, clock: clock)
        sandbox.faults.add(.status(500), on: .path("/api/logout", method: "POST"))
        #expect(await clock.waitForSleepers(1))
        await clock.advance(by: .seconds(1_800))
        let state = try await until(anna) { !$0.isLoggedIn }
        #expect(state.errorMessage == .key(.timeoutLoggedOut))
        #expect(state.connection == .disconnected)
        #expect(sandbox.log.entries.contains { $0.path == "/api/logout" && $0.status == 500 })
    }

    @Test(arguments: ChatBackend.allCases)
    func comingBackToTheForegroundReconnectsAndSendsSetSessionIdAgain(_ backend: ChatBackend) async throws {
        let server = try await ChatServerUnderTest.start(backend)
        defer { server.stop() }
        let anna = try await loggedIn("anna", on: server)
        let before = try await server.sessionIDsReceived()
        #expect(before.count == 1)
        await anna.enterForeground()
        try await until(anna) { $0.connection == .connected }
        // Still logged in on the new connection: the server restored it from the session. The command
        // follows setSessionId on the same connection, so the server has seen both once it answers.
        await anna.send("/whoami")
        let state = try await until(anna) { !$0.consoleAwaitsReply }
        #expect(state.consoleLines.contains(.output("anna")))
        #expect(state.isLoggedIn)
        let after = try await server.sessionIDsReceived()
        #expect(after.count == 2)
        #expect(Set(after).count == 1)
    }

    @Test(arguments: ChatBackend.allCases)
    func badInputFromTheServerLeavesTheStateIntact(_ backend: ChatBackend) async throws {
        let server = try await ChatServerUnderTest.start(backend)
        defer { server.stop() }
        // A virtual clock that never moves: the countdown stays put however slow the machine is.
        let anna = try await loggedIn("anna", on: server, clock: TestClock())
        _ = try await loggedIn("bob", on: server, gender: "m")
        await anna.openConversation(with: "bob")
        await anna.send("vorher")
        let before = try await until(anna) {
            $0.conversationMessages.last?.status == .sent && $0.onlineUsers.count == 2
        }
        for (event, argument) in [
            ("serverNotice", ["x": 1] as JSONValue), ("message", "kein Objekt"), ("message", ["toUserName": "anna"]),
            ("userList", 5), ("searchResults", ["users": "nein"]), ("inboxResults", .null),
            ("historyResults", true), ("conversation", ["messages": []]), ("messageSent", ["id": []]),
            ("unreadChats", ["count": "viele"]), ("commandTable", ["rows": []]), ("userBlocked", 7),
            ("loginSuccess", ["age": 3]),
        ] {
            try await server.inject(event, [argument], toUser: "anna")
        }
        try await server.inject("unreadChats", [["count": 7]], toUser: "anna")  // the sentinel
        var after = try await until(anna) { $0.unreadChatsCount == 7 }
        after.unreadChatsCount = before.unreadChatsCount
        #expect(after == before)
    }

    @Test(arguments: ChatBackend.allCases)
    func feedbackAdminAndPartners(_ backend: ChatBackend) async throws {
        let server = try await ChatServerUnderTest.start(backend)
        defer { server.stop() }
        let logs = LogCollector()
        let anna = try server.repository(
            logger: TidingsLogger(subsystem: "test", minimumLevel: .debug, sink: logs.append))
        await anna.restoreSession()
        await anna.sendFeedback(FeedbackRequest(name: "anna", message: "Schöne App"))
        #expect(await anna.state.feedbackMessage == .key(.feedbackSent))
        await anna.sendFeedback(FeedbackRequest(message: "  "))
        #expect(await anna.state.feedbackMessage == .server("message required"))
        await anna.loadFeedback()
        var state = await anna.state
        #expect(state.feedback.map(\.message) == ["Schöne App"])
        #expect(!state.loading.feedback)
        let id = try #require(state.feedback.first?.id)

        await anna.deleteFeedback(id: id)  // not an admin: refused before asking
        #expect(await anna.state.feedbackMessage == .key(.errorUnauthorized))
        await anna.adminLogin(password: "falsch-\(server.adminPassword)")
        #expect(await anna.state.feedbackMessage == .server("wrong password"))
        #expect(await !anna.state.isFeedbackAdmin)
        await anna.adminLogin(password: server.adminPassword)
        state = await anna.state
        #expect(state.isFeedbackAdmin)
        // Nor in the sandbox's request log (the state and the logger's records are checked at the end).
        if let sandbox = server.sandbox {
            #expect(sandbox.log.entries.contains { $0.path == "/api/feedback/admin-login" && $0.status == 200 })
            #expect(!sandbox.log.entries.contains { $0.description.contains(server.adminPassword) })
        }
        #expect(state.feedbackMessage == .key(.adminLoggedIn))
        await anna.deleteFeedback(id: id)
        state = await anna.state
        #expect(state.feedback.isEmpty)
        #expect(state.feedbackMessage == .key(.feedbackDeleted))
        await anna.adminLogout()
        #expect(await !anna.state.isFeedbackAdmin)

        await anna.loadPartners()
        state = await anna.state
        #expect(state.partners == [PartnerLinkDto(pageName: "Tidings", url: "https://example.org/tidings")])
        #expect(!state.loading.partners)

        // The password is nowhere: not in the state, not in a log line.
        var dump = ""
        Swift.dump(await anna.state, to: &dump)
        #expect(!dump.contains(server.adminPassword))
        #expect(!logs.records.contains { $0.message.contains(server.adminPassword) })
    }

    @Test func logoutClearsCookiesAndKeepsTheSavedProfileWhichTheNextLaunchRestores() async throws {
        let server = try await ChatServerUnderTest.start(.sandbox)
        defer { server.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ypchat-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = YpChatProfileStore(url: directory.appendingPathComponent("profile.json"))
        let anna = try server.repository(profileStore: store)
        await anna.restoreSession()
        let profile = ChatProfile(userName: "anna", gender: "w", age: 30, country: "AT")
        await anna.login(profile)
        try await until(anna) { $0.isLoggedIn }
        await anna.logout()
        let state = await anna.state
        #expect(!state.isLoggedIn)
        #expect(state.savedProfile == profile)
        #expect(state.countries.count == 4)
        #expect(state.connection == .disconnected)
        #expect(anna.rest.cookies.all.isEmpty)

        let nextLaunch = try server.repository(profileStore: store)
        await nextLaunch.restoreSession()
        #expect(await nextLaunch.state.savedProfile == profile)
        #expect(await !nextLaunch.state.isLoggedIn)
    }

    @Test func aLoginRestoredFromTheSessionNeedsNoNewLogin() async throws {
        let server = try await ChatServerUnderTest.start(.sandbox)
        defer { server.stop() }
        let rest = try server.restClient()
        let first = YpChatRepository(rest: rest, socket: { YpChatSocketClient(rest: $0, options: quickOptions()) })
        await first.login(ChatProfile(userName: "anna", gender: "w", age: 30, country: "DE"))
        try await until(first) { $0.isLoggedIn }
        // The app restarts with the same cookie jar: api/session says logged in, the socket binds.
        let second = YpChatRepository(rest: rest, socket: { YpChatSocketClient(rest: $0, options: quickOptions()) })
        await second.restoreSession()
        let state = try await until(second) { $0.currentUser?.age == 30 }
        #expect(state.currentUser?.userName == "anna")
    }
}
