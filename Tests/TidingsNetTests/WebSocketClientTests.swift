import Foundation
import Testing

@testable import TidingsNet

@Suite struct WebSocketClientTests {
    private func configuration() -> WebSocket.Configuration {
        WebSocket.Configuration(pingInterval: nil)
    }

    @Test func echoesTextAndBinaryThroughAScriptedServer() async throws {
        let server = try LoopbackWebSocketServer()
        async let serverSide: Void = {
            let side = try await server.accept()
            try await side.acceptUpgrade()
            for _ in 0..<2 {
                guard let frame = try await side.nextFrame() else { return }
                try await side.send(WebSocketFrame(opcode: frame.opcode, payload: frame.payload))
            }
            try await side.send(.close(code: .goingAway, reason: "bye"))
            _ = try await side.nextFrame()
            side.close()
        }()
        let socket = try await WebSocket.connect(to: server.url, configuration: configuration())
        try await socket.send(text: "héllo")
        try await socket.send(binary: [0, 1, 2, 255])
        var received: [WebSocketMessage] = []
        for try await message in socket.messages { received.append(message) }
        try await serverSide
        #expect(received == [.text("héllo"), .binary([0, 1, 2, 255])])
        #expect(socket.closeStatus?.code == .goingAway)
        #expect(socket.closeStatus?.reason == "bye")
    }
}
