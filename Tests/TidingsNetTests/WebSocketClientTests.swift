import Foundation
import Testing
import TidingsCore

@testable import TidingsNet

@Suite(.timeLimit(.minutes(1))) struct WebSocketClientTests {
    private func quiet() -> WebSocket.Configuration { WebSocket.Configuration(pingInterval: nil) }

    @Test func echoesTextAndBinaryAndSurfacesTheServersCloseCode() async throws {
        let server = try LoopbackWebSocketServer()
        async let serverSide: Void = {
            let side = try await server.accept()
            try await side.acceptUpgrade()
            for _ in 0..<2 {
                guard let frame = try await side.nextFrame() else { return }
                try await side.send(WebSocketFrame(opcode: frame.opcode, payload: frame.payload))
            }
            try await side.send(.close(code: .goingAway, reason: "bye"))
            // The client echoes the close code, then lets go of the connection.
            let reply = try await side.nextFrame()
            #expect(try reply?.closeStatus().code == .goingAway)
            #expect(try await side.readUntilEOF())
            side.close()
        }()
        let socket = try await WebSocket.connect(to: server.url, configuration: quiet())
        try await socket.send(text: "héllo")
        try await socket.send(binary: [0, 1, 2, 255])
        let (received, error) = await drain(socket)
        try await serverSide
        #expect(error == nil)
        #expect(received == [.text("héllo"), .binary([0, 1, 2, 255])])
        #expect(socket.closeStatus?.code == .goingAway)
        #expect(socket.closeStatus?.reason == "bye")
        await #expect(throws: WebSocketError.self) { try await socket.send(text: "too late") }
    }

    @Test func customHeadersAndSubprotocolsAreSentAndTheChoiceIsReported() async throws {
        let server = try LoopbackWebSocketServer()
        async let serverSide: ServerSide = {
            let side = try await server.accept()
            try await side.acceptUpgrade(extraHeaders: "Sec-WebSocket-Protocol: chat.v2\r\n")
            return side
        }()
        var configuration = quiet()
        configuration.headers = [
            ("Authorization", "Bearer s3cr3t"), ("Origin", "https://app.example"), ("Cookie", "a=b"),
        ]
        configuration.subprotocols = ["chat.v3", "chat.v2"]
        let socket = try await WebSocket.connect(to: server.url, configuration: configuration)
        let side = try await serverSide
        #expect(side.requestHead.hasPrefix("GET /socket HTTP/1.1\r\n"))
        #expect(side.header("Host") == "127.0.0.1:\(server.port)")
        #expect(side.header("Authorization") == "Bearer s3cr3t")
        #expect(side.header("Origin") == "https://app.example")
        #expect(side.header("Cookie") == "a=b")
        #expect(side.header("Sec-WebSocket-Protocol") == "chat.v3, chat.v2")
        #expect(side.header("Sec-WebSocket-Version") == "13")
        #expect(socket.subprotocol == "chat.v2")
        side.close()
        await socket.close()
    }

    @Test func aWrongAcceptKeyOrAnHTTPErrorFailsTheHandshake() async throws {
        let server = try LoopbackWebSocketServer()
        async let first: Void = {
            let side = try await server.accept()
            try await side.acceptUpgrade(accept: "dGhlIHNhbXBsZSBub25jZQ==")
        }()
        await #expect {
            _ = try await WebSocket.connect(to: server.url, configuration: quiet())
        } throws: { error in
            (error as? WebSocketError) == .handshakeFailed
        }
        try await first
        async let second: Void = {
            let side = try await server.accept()
            try await side.sendRaw(Array("HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n".utf8))
        }()
        var configuration = quiet()
        configuration.headers = [("Authorization", "Bearer s3cr3t")]
        do {
            _ = try await WebSocket.connect(to: server.url, configuration: configuration)
            Issue.record("a 401 must not open the connection")
        } catch let error as WebSocketError {
            #expect(error == .handshakeFailed)
            #expect(error.httpStatus == 401)
            #expect(!error.description.contains("s3cr3t"))
        }
        try await second
    }

    @Test func framesSentWithTheUpgradeResponseAreNotLost() async throws {
        let server = try LoopbackWebSocketServer()
        async let serverSide: Void = {
            let side = try await server.accept()
            let early = WebSocketFrameEncoder(role: .server).encode(
                WebSocketFrame(opcode: .text, payload: Array("early".utf8)))
            try await side.acceptUpgrade(extra: early)
            try await side.send(.close(code: .normalClosure))
            _ = try await side.readUntilEOF()
        }()
        let socket = try await WebSocket.connect(to: server.url, configuration: quiet())
        let (received, error) = await drain(socket)
        try await serverSide
        #expect(received == [.text("early")])
        #expect(error == nil)
    }

    @Test func fragmentedMessagesWithAPingInBetweenAreReassembledAndThePingAnswered() async throws {
        let server = try LoopbackWebSocketServer()
        async let serverSide: Void = {
            let side = try await server.accept()
            try await side.acceptUpgrade()
            try await side.send(WebSocketFrame(fin: false, opcode: .text, payload: Array("frag".utf8)))
            try await side.send(WebSocketFrame(opcode: .ping, payload: Array("are you there".utf8)))
            try await side.send(WebSocketFrame(fin: false, opcode: .continuation, payload: [0xE2, 0x82]))
            try await side.send(WebSocketFrame(opcode: .continuation, payload: [0xAC]))
            let pong = try await side.nextFrame()
            #expect(pong == WebSocketFrame(opcode: .pong, payload: Array("are you there".utf8)))
            try await side.send(.close(code: .normalClosure))
            _ = try await side.readUntilEOF()
        }()
        let socket = try await WebSocket.connect(to: server.url, configuration: quiet())
        let (received, error) = await drain(socket)
        try await serverSide
        #expect(received == [.text("frag€")])
        #expect(error == nil)
    }

    @Test func aServerThatVanishesEndsTheStreamWithConnectionLost() async throws {
        let server = try LoopbackWebSocketServer()
        async let serverSide: Void = {
            let side = try await server.accept()
            try await side.acceptUpgrade()
            try await side.send(WebSocketFrame(opcode: .binary, payload: [1]))
            side.close()
        }()
        let socket = try await WebSocket.connect(to: server.url, configuration: quiet())
        let (received, error) = await drain(socket)
        try await serverSide
        #expect(received == [.binary([1])])
        #expect((error as? WebSocketError) == .connectionLost)
        #expect((error as? WebSocketError)?.closeCode == .abnormalClosure)
    }

    @Test func aProtocolViolationIsAnsweredWithClose1002AndThrown() async throws {
        let server = try LoopbackWebSocketServer()
        async let serverSide: Void = {
            let side = try await server.accept()
            try await side.acceptUpgrade()
            // A server must never mask its frames.
            try await side.sendRaw(WebSocketFrameEncoder(role: .client).encode(WebSocketFrame(opcode: .text)))
            let close = try await side.nextFrame()
            #expect(try close?.closeStatus().code == .protocolError)
        }()
        let socket = try await WebSocket.connect(to: server.url, configuration: quiet())
        let (_, error) = await drain(socket)
        try await serverSide
        #expect((error as? WebSocketError) == .protocolViolation)
    }

    @Test func aMessageAboveTheLimitIsRefusedWith1009() async throws {
        let server = try LoopbackWebSocketServer()
        async let serverSide: Void = {
            let side = try await server.accept()
            try await side.acceptUpgrade()
            try await side.send(WebSocketFrame(opcode: .binary, payload: Array(repeating: 1, count: 2000)))
            let close = try await side.nextFrame()
            #expect(try close?.closeStatus().code == .messageTooBig)
        }()
        var configuration = quiet()
        configuration.maximumMessageSize = 1000
        let socket = try await WebSocket.connect(to: server.url, configuration: configuration)
        let (_, error) = await drain(socket)
        try await serverSide
        #expect((error as? WebSocketError) == .messageTooBig)
    }

    @Test func closingRunsTheHandshakeAndFinishesTheStreamNormally() async throws {
        let server = try LoopbackWebSocketServer()
        async let serverSide: Void = {
            let side = try await server.accept()
            try await side.acceptUpgrade()
            let close = try await side.nextFrame()
            let status = try close?.closeStatus()
            #expect(status?.code == WebSocketCloseCode(rawValue: 4000))
            #expect(status?.reason == "done")
            try await side.send(.close(code: WebSocketCloseCode(rawValue: 4000)))
            #expect(try await side.readUntilEOF())
        }()
        let socket = try await WebSocket.connect(to: server.url, configuration: quiet())
        let reader = Task { await drain(socket) }
        await socket.close(code: WebSocketCloseCode(rawValue: 4000), reason: "done")
        let (received, error) = await reader.value
        try await serverSide
        #expect(received.isEmpty)
        #expect(error == nil)
    }

    @Test func unansweredPingsDeclareThePeerDeadOnTheVirtualClock() async throws {
        let clock = TestClock()
        let server = try LoopbackWebSocketServer()
        var configuration = WebSocket.Configuration(pingInterval: .seconds(30), pongTimeout: .seconds(10))
        configuration.clock = clock
        async let serverSide: ServerSide = {
            let side = try await server.accept()
            try await side.acceptUpgrade()
            return side
        }()
        let socket = try await WebSocket.connect(to: server.url, configuration: configuration)
        let side = try await serverSide
        var messages = socket.messages.makeAsyncIterator()

        // First round: the server answers, so the connection survives the pong deadline.
        await clock.advance(by: .seconds(30))
        let firstPing = try await side.nextFrame()
        #expect(firstPing?.opcode == .ping)
        try await side.send(WebSocketFrame(opcode: .pong, payload: firstPing?.payload ?? []))
        try await side.send(WebSocketFrame(opcode: .text, payload: Array("still here".utf8)))
        // The reader handles frames in order: once the text is out, the pong has been seen.
        #expect(try await messages.next() == .text("still here"))
        await clock.advance(by: .seconds(10))

        // Second round: silence. The client must give up exactly at the pong timeout.
        await clock.advance(by: .seconds(20))
        let secondPing = try await side.nextFrame()
        #expect(secondPing?.opcode == .ping)
        #expect(secondPing?.payload != firstPing?.payload)
        await clock.advance(by: .seconds(9))
        await clock.advance(by: .seconds(1))
        await #expect {
            _ = try await messages.next()
        } throws: { error in
            (error as? WebSocketError) == .pongTimeout
        }
        side.close()
    }

    @Test func anIdleConnectionWithoutPingsNeverTimesOut() async throws {
        let clock = TestClock()
        let server = try LoopbackWebSocketServer()
        var configuration = WebSocket.Configuration(pingInterval: nil)
        configuration.clock = clock
        async let serverSide: ServerSide = {
            let side = try await server.accept()
            try await side.acceptUpgrade()
            return side
        }()
        let socket = try await WebSocket.connect(to: server.url, configuration: configuration)
        let side = try await serverSide
        // A day of virtual silence: nothing may be waiting on the clock to cut the connection.
        await clock.advance(by: .seconds(86_400))
        #expect(clock.pendingSleepers == 0)
        try await side.send(WebSocketFrame(opcode: .text, payload: Array("morning".utf8)))
        var iterator = socket.messages.makeAsyncIterator()
        #expect(try await iterator.next() == .text("morning"))
        side.close()
    }

    @Test func aURLThatIsNotWebSocketIsRefused() async {
        for text in ["http://example.com/", "wss://", "ftp://x/"] {
            await #expect(throws: WebSocketError.self, "\(text)") {
                _ = try await WebSocket.connect(to: URL(string: text)!, configuration: quiet())
            }
        }
    }
}
