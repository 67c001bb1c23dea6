import Foundation
import Testing
import TidingsCore
import TidingsNet
import TidingsSandbox
import TidingsSandboxKit
import TidingsYpChat

/// The socket client against the Swift sandbox on loopback (REST and Socket.IO on one port).
@Suite(.timeLimit(.minutes(1))) struct YpChatSocketTests {
    @Test func setSessionIdAfterConnectAndAfterEveryReconnect() async throws {
        let sandbox = try LoopbackYpChat()
        defer { sandbox.stop() }
        let id = try #require(try await sandbox.client.session().sessionId)
        let socket = YpChatSocketClient(rest: sandbox.client, options: quickOptions())
        var events = socket.events.makeAsyncIterator()
        var skipped: [YpChatSocketEvent] = []
        try await socket.connect()
        _ = try await nextEvent(&events, skipped: &skipped) { $0 == .connect ? true : nil }
        try await socket.login(userName: "anna", gender: "w", age: 30, country: "DE")
        _ = try await nextEvent(&events, skipped: &skipped) { if case .loginSuccess = $0 { true } else { nil } }
        // The handshake carried the REST cookie, and setSessionId the session's id, before login.
        #expect(sandbox.server.handshakeSessionCookies.first == "s%3A\(id).sandbox")
        #expect(await sandbox.server.chat.sessionIDsReceived.map(\.session) == [id])
        #expect(try await sandbox.client.session().userName == "anna")

        // Drop the connection from the server side: the client reconnects and sends it again.
        sandbox.server.faults.add(.dropMidResponse, on: .event("requestHistory"), times: 1)
        try await socket.requestHistory()
        _ = try await nextEvent(&events, skipped: &skipped) { if case .disconnect = $0 { true } else { nil } }
        _ = try await nextEvent(&events, skipped: &skipped) { $0 == .connect ? true : nil }
        // setSessionId of a logged-in session logs the new connection in again.
        #expect(
            try await nextEvent(&events, skipped: &skipped) { if case .loginSuccess(let u) = $0 { u } else { nil } }
                .userName == "anna")
        try await socket.requestHistory()
        _ = try await nextEvent(&events, skipped: &skipped) { if case .historyResults = $0 { true } else { nil } }
        #expect(await sandbox.server.chat.sessionIDsReceived.map(\.session) == [id, id])
        #expect(sandbox.server.handshakeSessionCookies.count == 2)
        #expect(sandbox.server.handshakeSessionCookies.allSatisfy { $0 == "s%3A\(id).sandbox" })
        await socket.disconnect()
    }

    @Test func pendingSessionIDWinsOverTheCookie() async throws {
        let sandbox = try LoopbackYpChat()
        defer { sandbox.stop() }
        _ = try await sandbox.client.session()
        let socket = YpChatSocketClient(rest: sandbox.client, options: quickOptions())
        await socket.setPendingSessionID("explicit-id")
        var events = socket.events.makeAsyncIterator()
        var skipped: [YpChatSocketEvent] = []
        try await socket.connect()
        try await socket.requestHistory()  // before login: answered with an error, after setSessionId
        _ = try await nextEvent(&events, skipped: &skipped) { if case .error = $0 { true } else { nil } }
        #expect(await sandbox.server.chat.sessionIDsReceived.map(\.session) == ["explicit-id"])
        await socket.disconnect()
    }

    @Test func everyEventOfAChatSessionDecodes() async throws {
        let sandbox = try LoopbackYpChat()
        defer { sandbox.stop() }
        let annaREST = sandbox.client
        let bobREST = try sandbox.anotherClient()
        _ = try await annaREST.session()
        _ = try await bobREST.session()
        let anna = YpChatSocketClient(rest: annaREST, options: quickOptions())
        let bob = YpChatSocketClient(rest: bobREST, options: quickOptions())
        var annaEvents = anna.events.makeAsyncIterator()
        var bobEvents = bob.events.makeAsyncIterator()
        var skipped: [YpChatSocketEvent] = []
        try await anna.connect()
        try await bob.connect()
        let greeting = try await nextEvent(&annaEvents, skipped: &skipped) {
            if case .connected(let id?) = $0 { id } else { nil }
        }
        #expect(!greeting.isEmpty)
        try await anna.login(userName: "anna", gender: "w", age: 30, country: "DE")
        #expect(
            try await nextEvent(&annaEvents, skipped: &skipped) { if case .loginSuccess(let u) = $0 { u } else { nil } }
                == YpChatUser(userName: "anna", gender: "w", age: 30, country: "DE"))
        try await bob.login(userName: "bob", gender: "m", age: 40, country: "AT")
        let online = try await nextEvent(&annaEvents, skipped: &skipped) {
            if case .userList(let users) = $0, users.count == 2 { users } else { nil }
        }
        #expect(online.map(\.userName) == ["anna", "bob"])

        try await anna.sendMessage("Hallo Bob", messageId: "m-1", toUserName: "bob")
        #expect(
            try await nextEvent(&annaEvents, skipped: &skipped) {
                if case .messageSent(let id) = $0 { id } else { nil }
            }
                == "m-1")
        let received = try await nextEvent(&bobEvents, skipped: &skipped) {
            if case .message(let m) = $0 { m } else { nil }
        }
        #expect(received.fromUserName == "anna")
        #expect(received.text == "Hallo Bob")
        #expect(received.messageId == "m-1")

        try await anna.sendImage(url: URL(string: "http://127.0.0.1/uploads/1")!, messageId: "m-2", toUserName: "bob")
        let image = try await nextEvent(&bobEvents, skipped: &skipped) {
            if case .message(let m) = $0 { m } else { nil }
        }
        #expect(image.isImage)
        #expect(image.imageUrl == "http://127.0.0.1/uploads/1")

        try await bob.requestOpenConversations()
        let inbox = try await nextEvent(&bobEvents, skipped: &skipped) {
            if case .inboxResults(let s) = $0 { s } else { nil }
        }
        #expect(inbox == [YpChatConversationSummary(userName: "anna", lastMessage: "[image]", unreadCount: 2)])
        #expect(
            try await nextEvent(&bobEvents, skipped: &skipped) { if case .unreadChats(let n) = $0 { n } else { nil } }
                == 1)

        try await bob.requestConversation(withUserName: "anna")
        let conversation = try await nextEvent(&bobEvents, skipped: &skipped) {
            if case .conversation(let partner, let messages) = $0 { (partner, messages) } else { nil }
        }
        #expect(conversation.0 == "anna")
        #expect(conversation.1.map(\.messageId) == ["m-1", "m-2"])

        try await bob.requestHistory()
        #expect(
            try await nextEvent(&bobEvents, skipped: &skipped) {
                if case .historyResults(let s) = $0 { s } else { nil }
            }
                == [YpChatConversationSummary(userName: "anna", lastMessage: "[image]", unreadCount: 0)])

        try await bob.search(
            YpChatSearchQuery(nameIncludes: "AN", minAge: 18, maxAge: 35, countries: ["DE"], genders: ["w"]))
        #expect(
            try await nextEvent(&bobEvents, skipped: &skipped) { if case .searchResults(let u) = $0 { u } else { nil } }
                .map(\.userName) == ["anna"])
        try await bob.search(YpChatSearchQuery(countries: ["CH"]))
        #expect(
            try await nextEvent(&bobEvents, skipped: &skipped) { if case .searchResults(let u) = $0 { u } else { nil } }
                .isEmpty)

        try await bob.blockUser("anna")
        #expect(
            try await nextEvent(&bobEvents, skipped: &skipped) { if case .userBlocked(let u) = $0 { u } else { nil } }
                == "anna")
        try await bob.unblockUser("anna")
        #expect(
            try await nextEvent(&bobEvents, skipped: &skipped) { if case .userUnblocked(let u) = $0 { u } else { nil } }
                == "anna")

        try await anna.sendMessage("/help", messageId: "c-1")
        #expect(
            try await nextEvent(&annaEvents, skipped: &skipped) {
                if case .commandResult(let t) = $0 { t } else { nil }
            }.contains("/users"))
        try await anna.sendMessage("/users", messageId: "c-2")
        let table = try await nextEvent(&annaEvents, skipped: &skipped) {
            if case .commandTable(let t) = $0 { t } else { nil }
        }
        #expect(
            table
                == YpChatCommandTable(
                    columns: ["userName", "age", "country"], rows: [["anna", "30", "DE"], ["bob", "40", "AT"]]))
        try await anna.sendMessage("/nope", messageId: "c-3")
        #expect(
            try await nextEvent(&annaEvents, skipped: &skipped) { if case .error(let t) = $0 { t } else { nil } }
                == "unknown command")
        #expect(!skipped.contains { if case .malformed = $0 { true } else { false } })
        await anna.disconnect()
        await bob.disconnect()
    }

    @Test func unknownEventsAndMissingOptionalFieldsDoNotBreakTheStream() async throws {
        let sandbox = try LoopbackYpChat()
        defer { sandbox.stop() }
        await sandbox.server.chat.setVariant(
            YpChatSandboxVariant(omitOptionalUserFields: true, extraUnknownEvents: true))
        _ = try await sandbox.client.session()
        let socket = YpChatSocketClient(rest: sandbox.client, options: quickOptions())
        var events = socket.events.makeAsyncIterator()
        var skipped: [YpChatSocketEvent] = []
        try await socket.connect()
        _ = try await nextEvent(&events, skipped: &skipped) { $0 == .unknown("serverNotice") ? true : nil }
        try await socket.login(userName: "anna", gender: "w", age: 30, country: "DE")
        #expect(
            try await nextEvent(&events, skipped: &skipped) { if case .loginSuccess(let u) = $0 { u } else { nil } }
                == YpChatUser(userName: "anna"))
        #expect(
            try await nextEvent(&events, skipped: &skipped) { if case .userList(let u) = $0 { u } else { nil } }
                == [YpChatUser(userName: "anna")])
        await socket.disconnect()
    }

    @Test func pollingOnlyTransportWorksToo() async throws {
        let sandbox = try LoopbackYpChat()
        defer { sandbox.stop() }
        _ = try await sandbox.client.session()
        var options = quickOptions()
        options.transports = .polling
        let socket = YpChatSocketClient(rest: sandbox.client, options: options)
        var events = socket.events.makeAsyncIterator()
        var skipped: [YpChatSocketEvent] = []
        try await socket.connect()
        try await socket.login(userName: "cem", gender: "m", age: 50, country: "CH")
        _ = try await nextEvent(&events, skipped: &skipped) { if case .loginSuccess = $0 { true } else { nil } }
        #expect(await socket.activeTransport == .polling)
        #expect(sandbox.server.handshakeSessionCookies.count == 1)
        #expect(await sandbox.server.chat.sessionIDsReceived.count == 1)
        await socket.disconnect()
    }
}

/// The socket client against the sandbox in process (no socket): the same events.
@Suite(.timeLimit(.minutes(1))) struct YpChatInProcessSocketTests {
    @Test(arguments: [EngineIOClient.Transports.polling, .pollingThenWebSocket, .webSocket])
    func loginAndCommandInProcess(_ transports: EngineIOClient.Transports) async throws {
        let server = YpChatSandboxServer()
        let rest = YpChatRESTClient(configuration: try YpChatConfiguration())
        let socket = YpChatSocketClient(rest: rest, connector: server.inProcessConnector(transports: transports))
        await socket.setPendingSessionID("in-process")
        var events = socket.events.makeAsyncIterator()
        var skipped: [YpChatSocketEvent] = []
        try await socket.connect()
        try await socket.login(userName: "dora", gender: "w", age: 22, country: "BE")
        _ = try await nextEvent(&events, skipped: &skipped) { if case .loginSuccess = $0 { true } else { nil } }
        try await socket.sendMessage("/users", messageId: "c")
        let table = try await nextEvent(&events, skipped: &skipped) {
            if case .commandTable(let table) = $0 { table } else { nil }
        }
        #expect(table.rows == [["dora", "22", "BE"]])
        #expect(await server.chat.sessionIDsReceived.map(\.session) == ["in-process"])
        #expect(skipped.first == .connect)
        await socket.disconnect()
        // Disconnected for good: the stream ends and a new connect is refused.
        while await events.next() != nil {}
        await #expect(throws: YpChatError.closed) { try await socket.connect() }
    }
}

/// Server variants the plan allows.
@Suite(.timeLimit(.minutes(1))) struct YpChatSandboxVariantTests {
    @Test func aServerWithoutWebSocketKeepsTheClientOnPolling() async throws {
        let sandbox = try LoopbackYpChat()
        defer { sandbox.stop() }
        await sandbox.server.chat.setVariant(YpChatSandboxVariant(pollingOnly: true))
        _ = try await sandbox.client.session()
        let socket = YpChatSocketClient(rest: sandbox.client, options: quickOptions())
        var events = socket.events.makeAsyncIterator()
        var skipped: [YpChatSocketEvent] = []
        try await socket.connect()
        try await socket.login(userName: "emil", gender: "m", age: 33, country: "DE")
        _ = try await nextEvent(&events, skipped: &skipped) { if case .loginSuccess = $0 { true } else { nil } }
        try await socket.sendMessage("/help", messageId: "c")
        _ = try await nextEvent(&events, skipped: &skipped) { if case .commandResult = $0 { true } else { nil } }
        #expect(await socket.activeTransport == .polling)
        #expect(!skipped.contains { if case .disconnect = $0 { true } else { false } })
        await socket.disconnect()
    }
}
