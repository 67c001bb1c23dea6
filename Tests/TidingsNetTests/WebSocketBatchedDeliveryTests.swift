import Foundation
import Testing
import TidingsCore

@testable import TidingsNet

/// Messages that arrive together (one socket read) reach the consumer together, but nothing about
/// what the consumer sees changes: order, the buffer limit, and everything before a close or an error.
@Suite(.timeLimit(.minutes(1))) struct WebSocketBatchedDeliveryTests {
    private func quiet(buffered: Int = 256) -> WebSocket.Configuration {
        WebSocket.Configuration(maximumBufferedMessages: buffered, pingInterval: nil)
    }

    /// The wire bytes of `frames` from the server, to be written at once.
    private func serverBytes(_ frames: [WebSocketFrame]) -> [UInt8] {
        var bytes: [UInt8] = []
        for frame in frames { WebSocketFrameEncoder(role: .server).encode(frame, into: &bytes) }
        return bytes
    }

    private func texts(_ range: Range<Int>) -> [WebSocketFrame] {
        range.map { WebSocketFrame(opcode: .text, payload: Array("m\($0)".utf8)) }
    }

    @Test func messagesBeforeAProtocolViolationInTheSameWriteAreDelivered() async throws {
        let server = try LoopbackWebSocketServer()
        let bad = WebSocketFrameEncoder(role: .client).encode(WebSocketFrame(opcode: .text, payload: [0x78]))
        async let serverSide: Void = {
            let side = try await server.accept()
            try await side.acceptUpgrade()
            // Three good frames and a masked one (never allowed from a server) in one write.
            try await side.sendRaw(serverBytes(texts(0..<3)) + bad)
            let close = try await side.nextFrame()
            #expect(try close?.closeStatus().code == .protocolError)
        }()
        let socket = try await WebSocket.connect(to: server.url, configuration: quiet())
        let (received, error) = await drain(socket)
        try await serverSide
        #expect(received == (0..<3).map { .text("m\($0)") })
        #expect((error as? WebSocketError) == .protocolViolation)
    }

    @Test func messagesBeforeACloseInTheSameWriteComeFirst() async throws {
        let server = try LoopbackWebSocketServer()
        async let serverSide: Void = {
            let side = try await server.accept()
            try await side.acceptUpgrade()
            try await side.sendRaw(serverBytes(texts(0..<5) + [.close(code: .goingAway, reason: "bye")]))
            let close = try await side.nextFrame()
            #expect(try close?.closeStatus().code == .goingAway)
        }()
        let socket = try await WebSocket.connect(to: server.url, configuration: quiet())
        let (received, error) = await drain(socket)
        try await serverSide
        #expect(received == (0..<5).map { .text("m\($0)") })
        #expect(error == nil)
        #expect(socket.closeStatus?.code == .goingAway)
    }

    @Test func aBurstInOneWriteStillStopsAtTheBufferLimit() async throws {
        let server = try LoopbackWebSocketServer()
        let count = 200
        let serverSide = Task {
            let side = try await server.accept()
            try await side.acceptUpgrade()
            try await side.sendRaw(serverBytes(texts(0..<count)))
            return side
        }
        let socket = try await WebSocket.connect(to: server.url, configuration: quiet(buffered: 4))
        let side = try await serverSide.value
        defer { side.close() }
        // Give the reader every chance to overfill the buffer with what it decoded from one read.
        for _ in 0..<5_000 { await Task.yield() }
        #expect(socket.bufferedMessages.count <= 4)
        var received: [WebSocketMessage] = []
        for try await message in socket.messages {
            received.append(message)
            if received.count == count { break }
        }
        #expect(received == (0..<count).map { .text("m\($0)") })
        #expect(socket.bufferedMessages.peak <= 4)
    }
}
