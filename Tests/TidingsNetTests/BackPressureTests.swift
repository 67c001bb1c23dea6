import Foundation
import Testing
import TidingsCore

@testable import TidingsNet

/// A consumer that does not keep up holds at most the configured number of messages; the rest stays
/// unread (in the kernel, or in the layer below), and nothing is lost or reordered.
@Suite(.timeLimit(.minutes(1))) struct BackPressureTests {
    /// Gives every other task plenty of turns: an unbounded reader would drain everything meanwhile.
    static func letOthersRun() async {
        for _ in 0..<5_000 { await Task.yield() }
    }

    @Test func aWebSocketStopsReadingWhileItsConsumerLags() async throws {
        let server = try LoopbackWebSocketServer()
        let count = 500
        let serverSide = Task {
            let side = try await server.accept()
            try await side.acceptUpgrade()
            for index in 0..<count {
                try await side.send(WebSocketFrame(opcode: .text, payload: Array("m\(index)".utf8)))
            }
            return side
        }
        let configuration = WebSocket.Configuration(maximumBufferedMessages: 8, pingInterval: nil)
        let socket = try await WebSocket.connect(to: server.url, configuration: configuration)
        // Every frame is in the kernel's buffers (small frames fit): only back-pressure keeps them there.
        let side = try await serverSide.value
        defer { side.close() }
        await Self.letOthersRun()
        #expect(socket.bufferedMessages.count <= 8)
        var received: [WebSocketMessage] = []
        for try await message in socket.messages {
            received.append(message)
            if received.count == count { break }
        }
        #expect(received == (0..<count).map { .text("m\($0)") })
        #expect(socket.bufferedMessages.peak <= 8)
    }

    @Test func aWebSocketAlsoBoundsTheBytesItHolds() async throws {
        let server = try LoopbackWebSocketServer()
        let count = 100
        let size = 16 * 1024
        let serverSide = Task {
            let side = try await server.accept()
            try await side.acceptUpgrade()
            for index in 0..<count {
                try await side.send(
                    WebSocketFrame(opcode: .binary, payload: [UInt8](repeating: UInt8(index), count: size)))
            }
            return side
        }
        let configuration = WebSocket.Configuration(
            maximumBufferedMessages: 1_000, maximumBufferedBytes: 64 * 1024, pingInterval: nil)
        let socket = try await WebSocket.connect(to: server.url, configuration: configuration)
        // 1.6 MB fit in loopback's kernel buffers: only the byte limit keeps them there.
        let side = try await serverSide.value
        defer { side.close() }
        await Self.letOthersRun()
        #expect(socket.bufferedBytes.count <= 64 * 1024 + size)
        var received = 0
        for try await message in socket.messages {
            #expect(message == .binary([UInt8](repeating: UInt8(received), count: size)))
            received += 1
            if received == count { break }
        }
        #expect(received == count)
        #expect(socket.bufferedBytes.peak <= 64 * 1024 + size)
    }

    @Test func engineIOPollingStopsPollingWhileItsConsumerLags() async throws {
        let http = FakePollingHTTP()
        http.respondToGet(EngineIOClientTransportTests.handshake)
        http.respondToGet((0..<50).map { "4a\($0)" }.joined(separator: "\u{1E}"))
        http.respondToGet((0..<50).map { "4b\($0)" }.joined(separator: "\u{1E}"))
        var configuration = EngineIOClientTransportTests.configuration(.polling)
        configuration.maximumBufferedMessages = 4
        let client = try await EngineIOClient.connect(
            configuration: configuration, clock: TestClock(), http: http, webSocketFactory: FakeWebSocketFactory())
        await Self.letOthersRun()
        #expect(client.bufferedMessages.count <= 4)
        // The handshake and the first poll only: the second poll waits for the consumer.
        #expect(http.getURLs.count == 2)
        var received: [String] = []
        for try await message in client.messages {
            if case .text(let text) = message { received.append(text) }
            if received.count == 100 { break }
        }
        #expect(received == (0..<50).map { "a\($0)" } + (0..<50).map { "b\($0)" })
        #expect(client.bufferedMessages.peak <= 4)
        await client.close()
    }

    @Test func socketIOStopsTakingMessagesWhileTheAppLags() async throws {
        let server = FakeSocketIOServer()
        let client = SocketIOClient(
            connector: server, configuration: .init(maximumBufferedEvents: 4), clock: TestClock())
        try await client.connect()
        for index in 0..<100 { await server.push(0, #"2["tick",\#(index)]"#) }
        await Self.letOthersRun()
        // `connect` plus at most four events wait; the rest stays in the session.
        #expect(client.bufferedEvents.count <= 5)
        var ticks: [Int] = []
        for await event in client.events {
            if case .event("tick", let arguments, _) = event, let value = arguments.first?.intValue {
                ticks.append(value)
            }
            if ticks.count == 100 { break }
        }
        #expect(ticks == Array(0..<100))
        #expect(client.bufferedEvents.peak <= 5)
    }
}

/// Inputs that would expand into unbounded memory are refused with typed errors.
@Suite(.timeLimit(.minutes(1))) struct ExpansionLimitTests {
    @Test func aPollingBodyWithTooManyPacketsFailsTheSession() async throws {
        let http = FakePollingHTTP()
        http.respondToGet(EngineIOClientTransportTests.handshake)
        http.respondToGet(Array(repeating: "6", count: 11).joined(separator: "\u{1E}"))
        var configuration = EngineIOClientTransportTests.configuration(.polling)
        configuration.maximumPacketsPerPoll = 10
        let client = try await EngineIOClient.connect(
            configuration: configuration, clock: TestClock(), http: http, webSocketFactory: FakeWebSocketFactory())
        var messages = client.messages.makeAsyncIterator()
        await #expect(throws: EngineIOError.tooManyPackets) { _ = try await messages.next() }
    }

    @Test func aMillionSeparatorsStopAtTheLimit() {
        let body = [UInt8](repeating: 0x1E, count: 1_000_000)
        #expect(throws: EngineIOError.self) { try EngineIOPayload.decode(body, maximumPackets: 10) }
    }

    @Test func attachmentsOfOnePacketAreBoundedInTotal() throws {
        var assembler = SocketIOPacketAssembler(maximumAttachmentBytes: 10)
        let text = #"52-["file",{"_placeholder":true,"num":0},{"_placeholder":true,"num":1}]"#
        #expect(try assembler.receive(text: text) == nil)
        #expect(try assembler.receive(binary: [UInt8](repeating: 1, count: 6)) == nil)
        #expect(throws: SocketIOError.malformedPacket) {
            _ = try assembler.receive(binary: [UInt8](repeating: 2, count: 6))
        }
        // The assembler starts over: the next packet is read normally.
        #expect(try assembler.receive(text: #"2["next"]"#)?.eventName == "next")
    }

    @Test func theSocketIOClientAppliesItsAttachmentLimit() async throws {
        let server = FakeSocketIOServer()
        let client = SocketIOClient(
            connector: server, configuration: .init(reconnects: false, maximumAttachmentBytes: 4), clock: TestClock())
        var events = client.events.makeAsyncIterator()
        try await client.connect()
        #expect(await events.next()?.label == "connect")
        await server.push(0, #"51-["file",{"_placeholder":true,"num":0}]"#)
        let sessions = await server.sessions
        sessions[0].deliver(.binary([1, 2, 3, 4, 5]))
        let next = await events.next()
        #expect(next?.label == "disconnect transportError")
    }

    @Test func anHTTPClientResponseOverTheLimitIsATypedError() async throws {
        let listener = try TCPListener.bind()
        defer { listener.close() }
        let server = Task {
            let connection = try await listener.accept()
            _ = try await EngineIOHTTPConnectionPoolTests.readRequest(connection)
            let head = "HTTP/1.1 200 OK\r\nContent-Length: 2048\r\nConnection: close\r\n\r\n"
            try await connection.write(Array(head.utf8) + [UInt8](repeating: 65, count: 2048))
            _ = try? await connection.read()
            connection.close()
        }
        defer { server.cancel() }
        let client = HTTPClient(configuration: .init(maximumResponseSize: 1024))
        let request = HTTPRequest(url: URL(string: "http://127.0.0.1:\(listener.port)/big")!)
        await #expect(throws: HTTPError.self) {
            do {
                _ = try await client.send(request)
            } catch let error as HTTPError {
                #expect(error == .transport)
                throw error
            }
        }
    }
}
