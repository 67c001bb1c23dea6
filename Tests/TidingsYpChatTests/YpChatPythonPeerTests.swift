import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsNet
import TidingsYpChat

/// The REST and socket clients against python-socketio (Tests/Peers/ypchat_peer.py): a Socket.IO
/// server nobody here wrote, which sends events before its connect reply.
@Suite(.timeLimit(.minutes(1))) struct YpChatPythonPeerTests {
    @Test(arguments: [EngineIOClient.Transports.pollingThenWebSocket, .webSocket, .polling])
    func sessionCookieSetSessionIdLoginAndEarlyEvents(_ transports: EngineIOClient.Transports) async throws {
        let peer = try await PythonPeer.start("ypchat_peer.py")
        defer { peer.stop() }
        let base = "http://127.0.0.1:\(peer.port)"
        let rest = YpChatRESTClient(configuration: try YpChatConfiguration(baseURL: base, allowsInsecureHTTP: true))
        let id = try #require(try await rest.session().sessionId)
        var options = YpChatSocketOptions()
        options.transports = transports
        let socket = YpChatSocketClient(rest: rest, options: options)
        var events = socket.events.makeAsyncIterator()
        var skipped: [YpChatSocketEvent] = []
        try await socket.connect()
        // Sent from the connect handler, before the connect reply: kept, after .connect.
        let socketID = try await nextEvent(&events, skipped: &skipped) {
            if case .connected(let id?) = $0 { id } else { nil }
        }
        #expect(!socketID.isEmpty)
        #expect(skipped == [.connect])
        _ = try await nextEvent(&events, skipped: &skipped) { $0 == .unknown("serverNotice") ? true : nil }
        try await socket.login(userName: "anna", gender: "w", age: 30, country: "DE")
        #expect(
            try await nextEvent(&events, skipped: &skipped) { if case .loginSuccess(let u) = $0 { u } else { nil } }
                == YpChatUser(userName: "anna", gender: "w", age: 30, country: "DE"))
        try await socket.sendMessage("hi", messageId: "m-9", toUserName: "anna")
        #expect(
            try await nextEvent(&events, skipped: &skipped) { if case .messageSent(let id) = $0 { id } else { nil } }
                == "m-9")
        try await socket.sendMessage("/help", messageId: "c-1")
        #expect(
            try await nextEvent(&events, skipped: &skipped) { if case .commandResult(let t) = $0 { t } else { nil } }
                .contains("/users"))
        #expect(try await rest.session() == SessionDto(loggedIn: true, userName: "anna", sessionId: id))

        let seen = try await HTTPClient().send(HTTPRequest(url: try #require(URL(string: base + "/debug"))))
        let debug = try JSONValue(parsing: seen.body)
        #expect(debug["sessionIds"] == [.string(id)])
        #expect(
            debug["handshakeCookies"]?.arrayValue?.first?.stringValue?.contains("connect.sid=s%3A\(id).peer") == true)
        await socket.disconnect()
    }
}
