import Foundation
import Testing
import TidingsCore
import TidingsNet
import TidingsSandbox

// The WebSocket code of Sources/TidingsNet/Documentation.docc/GettingStarted.md, run as written against
// the sandbox's loopback WebSocket server (here, where TidingsSandbox is a dependency). The Socket.IO and
// HTTP snippets run against the Python peers in Tests/InteropTests/NetDocSnippetTests.swift.

@Suite(.timeLimit(.minutes(1))) struct NetWebSocketDocSnippetTests {
    @Test func openAWebSocket() async throws {
        let token = "secret-token"
        let seen = SeenHeaders()
        let server = try LoopbackWebSocketServer(
            authorize: { request in
                seen.record(request)
                return true
            }
        ) { _, connection in
            do {
                for try await message in connection.messages {
                    if case .text(let text) = message { try await connection.send(text: "echo: \(text)") }
                }
            } catch {
                await connection.close()
            }
        }
        defer { server.stop() }
        let url = server.url
        var printed: [String] = []
        func print(_ text: String) { printed.append(text) }

        var configuration = WebSocket.Configuration()
        configuration.headers = [("Authorization", "Bearer \(token)")]
        configuration.connectTimeout = .seconds(10)
        configuration.pingInterval = .seconds(30)
        configuration.maximumBufferedMessages = 64
        let socket = try await WebSocket.connect(to: url, configuration: configuration)
        try await socket.send(text: "hello")
        for try await message in socket.messages {
            if case .text(let text) = message {
                print(text)
                break
            }
        }
        await socket.close()

        #expect(printed == ["echo: hello"])
        #expect(seen.authorization == "Bearer \(token)")
        #expect(seen.target?.contains(token) == false)
    }
}

/// The upgrade request the server saw.
private final class SeenHeaders: Sendable {
    private struct State {
        var request: LoopbackWebSocketServer.UpgradeRequest?
    }
    private let state = LockedState(State())

    func record(_ request: LoopbackWebSocketServer.UpgradeRequest) {
        state.withLock { locked in locked.request = request }
    }
    var authorization: String? { state.withLock { locked in locked.request?.headers["authorization"] } }
    var target: String? { state.withLock { locked in locked.request?.target } }
}
