import Foundation
import Testing

@testable import TidingsNet

/// Close codes 1012–1014, the send-side message limit, ack-id wrapping and redirect rules.
@Suite(.timeLimit(.minutes(1))) struct ProtocolDetailTests {
    @Test(arguments: [UInt16(1012), 1013, 1014])
    func registeredCloseCodesAreValidOnTheWire(code: UInt16) throws {
        let frame = WebSocketFrame.close(code: WebSocketCloseCode(rawValue: code), reason: "later")
        #expect(try frame.closeStatus().code.rawValue == code)
    }

    @Test(arguments: [UInt16(1004), 1005, 1006, 1015, 1016, 2999])
    func reservedCloseCodesAreStillRefused(code: UInt16) {
        #expect(throws: WebSocketError.self) {
            _ = try WebSocketFrame.close(code: WebSocketCloseCode(rawValue: code)).closeStatus()
        }
    }

    @Test(arguments: [UInt16(1012), 1013, 1014])
    func aServerClosingWithARegisteredCodeIsEchoedNotAnsweredWith1002(code: UInt16) async throws {
        let server = try LoopbackWebSocketServer()
        async let serverSide: Void = {
            let side = try await server.accept()
            try await side.acceptUpgrade()
            try await side.send(.close(code: WebSocketCloseCode(rawValue: code), reason: "restart"))
            let reply = try await side.nextFrame()
            #expect(try reply?.closeStatus().code.rawValue == code)
            _ = try await side.readUntilEOF()
            side.close()
        }()
        let socket = try await WebSocket.connect(to: server.url, configuration: .init(pingInterval: nil))
        var ended: (any Error)?
        do {
            for try await _ in socket.messages {}
        } catch {
            ended = error
        }
        try await serverSide
        #expect(ended == nil)
        #expect(socket.closeStatus?.code.rawValue == code)
    }

    @Test func sendingAMessageAboveTheLimitThrowsMessageTooBigAndSendsNothing() async throws {
        let server = try LoopbackWebSocketServer()
        async let serverSide: [UInt8]? = {
            let side = try await server.accept()
            try await side.acceptUpgrade()
            // The first frame to arrive must be the small message, not the oversized one.
            let frame = try await side.nextFrame()
            side.close()
            return frame?.payload
        }()
        var configuration = WebSocket.Configuration(pingInterval: nil)
        configuration.maximumMessageSize = 1000
        let socket = try await WebSocket.connect(to: server.url, configuration: configuration)
        await #expect {
            try await socket.send(binary: [UInt8](repeating: 1, count: 1001))
        } throws: { error in
            (error as? WebSocketError) == .messageTooBig
        }
        await #expect {
            try await socket.send(text: String(repeating: "é", count: 501))
        } throws: { error in
            (error as? WebSocketError) == .messageTooBig
        }
        try await socket.send(binary: [UInt8](repeating: 2, count: 1000))
        #expect(try await serverSide == [UInt8](repeating: 2, count: 1000))
        await socket.close()
    }

    @Test func ackIDsSkipIDsStillPendingAfterWrapping() {
        let max = Int(Int32.max)
        #expect(SocketIOClient.freeAckID(from: 5) { _ in false } == 5)
        #expect(SocketIOClient.freeAckID(from: max) { $0 == max } == 0)
        let pending: Set = [max, 0, 1, 3]
        #expect(SocketIOClient.freeAckID(from: max) { pending.contains($0) } == 2)
    }

    @Test(arguments: [
        ("https://a.example/x", "https://a.example/x", "https://a.example/y", true),
        ("https://a.example/x", "https://a.example/x", "https://a.example:443/y", true),
        ("https://a.example/x", "https://a.example/x", "http://a.example/y", false),
        ("https://a.example/x", "https://a.example/x", "https://a.example:8443/y", false),
        ("https://a.example/x", "https://a.example/x", "https://b.example/y", false),
        ("http://a.example:8080/x", "http://a.example:8080/x", "http://a.example:8081/y", false),
        // Once the chain left the origin, coming back does not restore the token.
        ("https://a.example/x", "https://b.example/y", "https://a.example/z", false),
    ])
    func theBearerTokenFollowsOnlyRedirectsWithinItsOrigin(
        original: String, from: String, to: String, keeps: Bool
    ) {
        #expect(
            HTTPClient.redirectKeepsAuthorization(
                original: URL(string: original), from: URL(string: from), to: URL(string: to)!) == keeps)
    }
}
