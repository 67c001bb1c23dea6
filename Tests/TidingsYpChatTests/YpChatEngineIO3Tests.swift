import Foundation
import Testing
import TidingsCore
import TidingsNet
import TidingsSandboxKit
import TidingsYpChat

/// The socket with `engineIOVersion = .v3` against a socket.io 2.x-shaped server (Engine.IO 3 polling:
/// `<length>:<packet>` payloads, the server connecting `/` by itself), at a socket path of the app's
/// choosing. The venv's python-socketio 5 speaks only Engine.IO 4, so this server is a small one here.
@Suite(.timeLimit(.minutes(1))) struct YpChatEngineIO3Tests {
    @Test func engineIO3AtAConfiguredSocketPathWithTheSessionCookie() async throws {
        let server = EngineIO3Server()
        let http = SandboxHTTPServer { await server.handle($0) }
        let listener = try http.serve()
        defer {
            listener.stop()
            Task { await server.close() }
        }
        let base = "http://127.0.0.1:\(listener.url.port ?? 0)/app"
        let rest = YpChatRESTClient(
            configuration: try YpChatConfiguration(
                baseURL: base, allowsInsecureHTTP: true, socketPath: "/chat-io/"))
        let session = try await rest.session()
        #expect(session.sessionId == "s1")
        var options = YpChatSocketOptions()
        options.engineIOVersion = .v3
        options.transports = .polling
        let socket = YpChatSocketClient(rest: rest, options: options)
        await socket.setPendingSessionID("s1")
        var events = socket.events.makeAsyncIterator()
        var skipped: [YpChatSocketEvent] = []
        try await socket.connect()
        try await socket.login(userName: "anna", gender: "w", age: 30, country: "DE")
        let user = try await nextEvent(&events, skipped: &skipped) {
            if case .loginSuccess(let user) = $0 { user } else { nil }
        }
        #expect(user.userName == "anna")
        #expect(skipped.first == .connect)

        let seen = await server.seen
        #expect(seen.handshakePath == "/chat-io/")
        #expect(seen.handshakeEIO == "3")
        #expect(seen.handshakeCookie == "s%3As1.sig")
        #expect(seen.events.map(\.name) == ["setSessionId", "login"])
        #expect(seen.events.first?.payload["expressSessionId"] == "s1")
        // The plan's login payload, with the session id.
        #expect(
            seen.events.last?.payload
                == ["userName": "anna", "gender": "w", "age": 30, "country": "DE", "expressSessionId": "s1"])
        await socket.disconnect()
    }

    @Test func everyEmitCarriesThePlansPayloadOnTheWire() async throws {
        let server = EngineIO3Server()
        let http = SandboxHTTPServer { await server.handle($0) }
        let listener = try http.serve()
        defer {
            listener.stop()
            Task { await server.close() }
        }
        let rest = YpChatRESTClient(
            configuration: try YpChatConfiguration(
                baseURL: "http://127.0.0.1:\(listener.url.port ?? 0)", allowsInsecureHTTP: true))
        var options = YpChatSocketOptions()
        options.engineIOVersion = .v3
        options.transports = .polling
        let socket = YpChatSocketClient(rest: rest, options: options)
        var events = socket.events.makeAsyncIterator()
        var skipped: [YpChatSocketEvent] = []
        try await socket.connect()
        try await socket.sendMessage("hallo", messageId: "m-1", toUserName: "bob")
        try await socket.sendMessage("/users", messageId: "c-1")
        let image = try #require(URL(string: "https://ypchat.example/uploads/a.png"))
        try await socket.sendImage(url: image, messageId: "m-2", toUserName: "bob")
        try await socket.requestConversation(withUserName: "bob")
        try await socket.search(
            YpChatSearchQuery(nameIncludes: "bo", minAge: 20, maxAge: 40, countries: ["AT", "DE"], genders: ["m"]))
        try await socket.requestHistory()
        try await socket.requestOpenConversations()
        try await socket.blockUser("bob")
        try await socket.unblockUser("bob")
        // The server answers the last emit; the polling POSTs go out one after another, in order.
        _ = try await nextEvent(&events, skipped: &skipped) { if case .userUnblocked = $0 { true } else { nil } }

        let seen = await server.seen.events.filter { $0.name != "setSessionId" }
        let expected: [(String, JSONValue)] = [
            ("message", ["message": "hallo", "messageId": "m-1", "toUserName": "bob"]),
            ("message", ["message": "/users", "messageId": "c-1"]),  // a command: no toUserName
            (
                "message",
                [
                    "message": "", "messageId": "m-2", "toUserName": "bob", "isImage": true,
                    "imageUrl": "https://ypchat.example/uploads/a.png",
                ]
            ),
            ("requestConversation", ["withUserName": "bob"]),
            (
                "userSearch",
                ["nameIncludes": "bo", "minAge": 20, "maxAge": 40, "countries": ["AT", "DE"], "genders": ["m"]]
            ),
            ("requestHistory", .null),
            ("requestOpenConversations", .null),
            ("blockUser", ["userName": "bob"]),
            ("unblockUser", ["userName": "bob"]),
        ]
        #expect(seen.map(\.name) == expected.map(\.0))
        for (got, want) in zip(seen, expected) { #expect(got.payload == want.1, "\(want.0)") }
        await socket.disconnect()
    }
}

/// A socket.io 2.x-shaped server over Engine.IO 3 long-polling, enough for one client: `GET api/session`
/// sets the session cookie; the handshake sends `open` and `40` in one payload; `login` is answered
/// `loginSuccess` on the next poll.
private actor EngineIO3Server {
    struct Seen {
        var handshakePath: String?
        var handshakeEIO: String?
        var handshakeCookie: String?
        var events: [(name: String, payload: JSONValue)] = []
    }

    private(set) var seen = Seen()
    private var outbox: [EngineIOPacket] = []
    private var poller: CheckedContinuation<[EngineIOPacket], Never>?
    private var closed = false

    func handle(_ request: SandboxHTTPRequest) async -> SandboxHTTPResponse {
        if request.path == "/app/api/session" {
            var response = SandboxHTTPResponse.text(#"{"loggedIn":false,"sessionId":"s1"}"#)
            response.setCookie("connect.sid", "s%3As1.sig")
            return response
        }
        guard request.queryValue("EIO") == "3", request.queryValue("transport") == "polling" else {
            return .text("unsupported", status: 400)
        }
        guard request.queryValue("sid") != nil else {
            seen.handshakePath = request.path.hasSuffix("/") ? request.path : request.path + "/"
            seen.handshakeEIO = request.queryValue("EIO")
            seen.handshakeCookie = request.cookies["connect.sid"]
            let open = #"{"sid":"e3","upgrades":[],"pingInterval":25000,"pingTimeout":60000}"#
            return Self.payload([EngineIOPacket(.open, .text(open)), EngineIOPacket(.message, .text("0"))])
        }
        if request.method == "POST" {
            let packets = (try? EngineIOPayload.decode(request.body, version: .v3)) ?? []
            for packet in packets { receive(packet) }
            return .text("ok")
        }
        return Self.payload(await poll())
    }

    func close() {
        closed = true
        poller?.resume(returning: [EngineIOPacket(.close)])
        poller = nil
    }

    private func receive(_ packet: EngineIOPacket) {
        switch packet.kind {
        case .ping: push(EngineIOPacket(.pong, packet.body))
        case .message:
            guard case .text(let text) = packet.body, text.hasPrefix("2"),
                let array = try? JSONValue(parsing: Data(text.utf8.dropFirst()))
            else { return }
            let items = array.arrayValue ?? []
            let name = items.first?.stringValue ?? ""
            let payload = items.dropFirst().first ?? .null
            seen.events.append((name, payload))
            if name == "unblockUser" {
                let event = JSONValue.array(["userUnblocked", ["userName": payload["userName"] ?? .null]])
                push(EngineIOPacket(.message, .text("2" + event.jsonString())))
            }
            if name == "login" {
                let user: JSONValue = ["userName": payload["userName"] ?? .null, "gender": "w", "age": 30]
                let event = JSONValue.array(["loginSuccess", user])
                push(EngineIOPacket(.message, .text("2" + event.jsonString())))
            }
        default: break
        }
    }

    private func push(_ packet: EngineIOPacket) {
        if let poller {
            self.poller = nil
            poller.resume(returning: [packet])
        } else {
            outbox.append(packet)
        }
    }

    private func poll() async -> [EngineIOPacket] {
        if closed { return [EngineIOPacket(.close)] }
        if !outbox.isEmpty {
            defer { outbox = [] }
            return outbox
        }
        return await withCheckedContinuation { poller = $0 }
    }

    private static func payload(_ packets: [EngineIOPacket]) -> SandboxHTTPResponse {
        SandboxHTTPResponse(
            status: 200, headers: ["Content-Type": "text/plain; charset=UTF-8"],
            body: Data(EngineIOPayload.encode(packets, version: .v3)))
    }
}
