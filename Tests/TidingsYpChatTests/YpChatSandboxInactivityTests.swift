import Foundation
import Testing
import TidingsCore
import TidingsNet
import TidingsSandbox
import TidingsYpChat

/// The sandbox's own 30-minute inactivity rule, on a virtual clock, with the socket in process.
@Suite(.timeLimit(.minutes(1))) struct YpChatSandboxInactivityTests {
    @Test func aUserSilentForThirtyMinutesIsLoggedOutByTheServer() async throws {
        let clock = TestClock()
        let server = YpChatSandboxServer(inactivityClock: clock)
        let rest = try server.inProcessRESTClient()
        let session = try #require(try await rest.session().sessionId)
        let socket = YpChatSocketClient(rest: rest, connector: server.inProcessConnector(transports: .webSocket))
        await socket.setPendingSessionID(session)
        var events = socket.events.makeAsyncIterator()
        var skipped: [YpChatSocketEvent] = []
        try await socket.connect()
        try await socket.login(userName: "anna", gender: "w", age: 30, country: "DE")
        _ = try await nextEvent(&events, skipped: &skipped) { if case .loginSuccess = $0 { true } else { nil } }

        await clock.advance(by: .seconds(1_800))  // exactly the limit: still logged in
        try await socket.requestHistory()
        _ = try await nextEvent(&events, skipped: &skipped) { if case .historyResults = $0 { true } else { nil } }
        await clock.advance(by: .seconds(1_801))  // one second past it
        try await socket.requestHistory()
        #expect(
            try await nextEvent(&events, skipped: &skipped) { if case .error(let text) = $0 { text } else { nil } }
                == "logged out after 30 minutes without activity")
        #expect(
            try await nextEvent(&events, skipped: &skipped) { if case .error(let text) = $0 { text } else { nil } }
                == "not logged in")
        #expect(await server.chat.onlineUserNames.isEmpty)
        #expect(try await rest.session().loggedIn == false)
        await socket.disconnect()
    }
}
