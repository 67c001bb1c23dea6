import Foundation
import Testing
import TidingsCore
import TidingsNet
import TidingsSandbox
import TidingsYpChat

/// Who the sandbox shows online follows the sockets: a user whose last socket went away is offline,
/// and the session's login comes back with the next socket's `setSessionId`.
@Suite(.timeLimit(.minutes(1))) struct YpChatSandboxPresenceTests {
    /// A socket in process, logged in as `name` on a session of its own.
    static func loggedInSocket(_ name: String, on server: YpChatSandboxServer) async throws -> (
        YpChatSocketClient, AsyncStream<YpChatSocketEvent>.Iterator, session: String
    ) {
        let rest = try server.inProcessRESTClient()
        let session = try #require(try await rest.session().sessionId)
        let socket = YpChatSocketClient(rest: rest, connector: server.inProcessConnector(transports: .webSocket))
        await socket.setPendingSessionID(session)
        var events = socket.events.makeAsyncIterator()
        var skipped: [YpChatSocketEvent] = []
        try await socket.connect()
        try await socket.login(userName: name, gender: "w", age: 30, country: "DE")
        _ = try await nextEvent(&events, skipped: &skipped) { if case .loginSuccess = $0 { true } else { nil } }
        return (socket, events, session)
    }

    @Test func aUserWhoseSocketClosedGoesOfflineAndComesBackWithTheSession() async throws {
        let server = YpChatSandboxServer()
        var (bob, bobEvents, _) = try await Self.loggedInSocket("bob", on: server)
        let (anna, _, annaSession) = try await Self.loggedInSocket("anna", on: server)
        var skipped: [YpChatSocketEvent] = []
        func bobSees(_ names: [String]) async throws {
            _ = try await nextEvent(&bobEvents, skipped: &skipped) {
                if case .userList(let users) = $0, users.map(\.userName) == names { true } else { nil }
            }
        }
        try await bobSees(["anna", "bob"])

        await anna.disconnect()
        try await bobSees(["bob"])
        #expect(await server.chat.onlineUserNames == ["bob"])
        // The session still knows its user: a new socket with the same session id is logged in at once.
        #expect(await server.state.session(id: annaSession)?.userName == "anna")
        let rest = try server.inProcessRESTClient()
        let again = YpChatSocketClient(rest: rest, connector: server.inProcessConnector(transports: .webSocket))
        await again.setPendingSessionID(annaSession)
        var againEvents = again.events.makeAsyncIterator()
        try await again.connect()
        let user = try await nextEvent(&againEvents, skipped: &skipped) {
            if case .loginSuccess(let user) = $0 { user } else { nil }
        }
        #expect(user.userName == "anna")
        try await bobSees(["anna", "bob"])
        await again.disconnect()
        await bob.disconnect()
    }

    @Test func aSecondSocketOfTheSameUserKeepsThemOnline() async throws {
        let server = YpChatSandboxServer()
        let (bob, _, _) = try await Self.loggedInSocket("bob", on: server)
        let (anna, _, annaSession) = try await Self.loggedInSocket("anna", on: server)
        // Anna's second socket on the same session (a foreground reconnect overlapping the old one).
        let rest = try server.inProcessRESTClient()
        let second = YpChatSocketClient(rest: rest, connector: server.inProcessConnector(transports: .webSocket))
        await second.setPendingSessionID(annaSession)
        var secondEvents = second.events.makeAsyncIterator()
        var skipped: [YpChatSocketEvent] = []
        try await second.connect()
        _ = try await nextEvent(&secondEvents, skipped: &skipped) { if case .loginSuccess = $0 { true } else { nil } }
        #expect(await server.chat.connectionCount == 3)

        await anna.disconnect()
        // The server hears of the closed socket on its own schedule; bounded, not timed.
        #expect(try await Self.eventually { await server.chat.connectionCount == 2 })
        #expect(await server.chat.onlineUserNames == ["anna", "bob"])
        await second.disconnect()
        #expect(try await Self.eventually { await server.chat.connectionCount == 1 })
        #expect(await server.chat.onlineUserNames == ["bob"])
        await bob.disconnect()
    }

    /// Re-checks `condition` until it holds; a guard against hanging, not a schedule.
    static func eventually(_ condition: @Sendable () async -> Bool) async throws -> Bool {
        for _ in 0..<1_000 {
            if await condition() { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return await condition()
    }
}
