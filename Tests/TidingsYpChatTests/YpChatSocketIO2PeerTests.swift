import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsNet
import TidingsYpChat

/// The YpChat socket with `engineIOVersion = .v3` against a real socket.io 2.x-protocol server
/// (python-socketio 4.6 / python-engineio 3.14, `Tests/Peers/sio2_server.py` run by `.venv-eio3/`):
/// one login and one message round trip over every transport.
@Suite(.timeLimit(.minutes(2))) struct YpChatSocketIO2PeerTests {
    @Test(arguments: [EngineIOClient.Transports.polling, .pollingThenWebSocket, .webSocket])
    func loginAndAMessageRoundTripOverEngineIO3(_ transports: EngineIOClient.Transports) async throws {
        let server = try await PythonPeer.shared("sio2_server.py", python: PythonPeer.pythonEIO3)
        let rest = YpChatRESTClient(
            configuration: try YpChatConfiguration(
                baseURL: "http://127.0.0.1:\(server.port)", allowsInsecureHTTP: true))
        var options = YpChatSocketOptions()
        options.engineIOVersion = .v3
        options.transports = transports
        let socket = YpChatSocketClient(rest: rest, options: options)
        var events = socket.events.makeAsyncIterator()
        var skipped: [YpChatSocketEvent] = []
        try await socket.connect()
        try await socket.login(userName: "anna", gender: "w", age: 30, country: "DE")
        let user = try await nextEvent(&events, skipped: &skipped) {
            if case .loginSuccess(let user) = $0 { user } else { nil }
        }
        #expect(user == YpChatUser(userName: "anna", gender: "w", age: 30, country: "DE"))
        #expect(skipped.first == .connect)

        try await socket.sendMessage("hallo é🎉", messageId: "m-1", toUserName: "echo")
        let sent = try await nextEvent(&events, skipped: &skipped) {
            if case .messageSent(let id) = $0 { id } else { nil }
        }
        #expect(sent == "m-1")
        let reply = try await nextEvent(&events, skipped: &skipped) {
            if case .message(let message) = $0 { message } else { nil }
        }
        #expect(reply.fromUserName == "echo")
        #expect(reply.text == "hallo é🎉")
        await socket.disconnect()
    }
}
