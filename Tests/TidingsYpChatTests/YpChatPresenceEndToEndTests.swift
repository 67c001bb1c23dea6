import Foundation
import Testing
import TidingsCore
import TidingsSandbox
import TidingsYpChat

/// Presence over the real wire against both servers: an app that quits without logging out (its socket
/// closed) leaves the other users' online list.
@Suite(.timeLimit(.minutes(1))) struct YpChatPresenceEndToEndTests {
    @Test(arguments: ChatBackend.allCases)
    func anAppThatQuitsWithoutLoggingOutGoesOffline(_ backend: ChatBackend) async throws {
        let server = try await ChatServerUnderTest.start(backend)
        defer { server.stop() }
        let bob = try await loggedIn("bob", on: server, gender: "m", clock: TestClock())
        let anna = try await loggedIn("anna", on: server, clock: TestClock())
        try await until(bob) { $0.onlineUsers.map(\.userName) == ["anna", "bob"] }
        await anna.close()
        let state = try await until(bob) { $0.onlineUsers.map(\.userName) == ["bob"] }
        #expect(state.isLoggedIn)
        #expect(try await anna.rest.session().loggedIn)  // the server session keeps the login
    }
}
