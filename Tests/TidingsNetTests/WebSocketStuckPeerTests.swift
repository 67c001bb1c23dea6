import Foundation
import Testing
import TidingsCore

@testable import TidingsNet

/// A server that completed the upgrade and then stopped reading: our writes fill the kernel
/// buffers and stall. Closing and pinging must still end on their deadlines.
@Suite(.timeLimit(.minutes(1))) struct WebSocketStuckPeerTests {
    /// Connects to a server that upgrades and never reads again; returns the socket and the server
    /// side (keep it alive so the connection stays open).
    static func connectToStalledPeer(_ configuration: WebSocket.Configuration) async throws -> (WebSocket, ServerSide) {
        let server = try LoopbackWebSocketServer()
        async let serverSide: ServerSide = {
            let side = try await server.accept()
            try await side.acceptUpgrade()
            return side
        }()
        let socket = try await WebSocket.connect(to: server.url, configuration: configuration)
        return (socket, try await serverSide)
    }

    /// Sends two large messages in the background: the first stalls inside the transport write
    /// (nobody reads), the second stays queued. Returns once both are in that state.
    static func stallWrites(_ socket: WebSocket) async throws -> [Task<Void, Never>] {
        let stalled = Task { _ = try? await socket.send(binary: [UInt8](repeating: 1, count: 48 * 1024 * 1024)) }
        // The writer took the first message off the queue and is stuck handing it to the kernel.
        while !(socket.outgoingState.writing && socket.outgoingState.queuedBytes == 0) {
            try Task.checkCancellation(); await Task.yield()
        }
        let queued = Task { _ = try? await socket.send(binary: [UInt8](repeating: 2, count: 1024 * 1024)) }
        while socket.outgoingState.queuedBytes < 1024 * 1024 { try Task.checkCancellation(); await Task.yield() }
        return [stalled, queued]
    }

    @Test func closeEndsOnItsTimeoutWhenThePeerStoppedReading() async throws {
        let clock = TestClock()
        var configuration = WebSocket.Configuration(
            maximumMessageSize: 64 * 1024 * 1024, pingInterval: nil, closeTimeout: .seconds(5))
        configuration.clock = clock
        let (socket, side) = try await Self.connectToStalledPeer(configuration)
        defer { side.close() }
        let senders = try await Self.stallWrites(socket)
        let closing = Task { await socket.close() }
        // The close timer must be running although the close frame cannot be written.
        #expect(await clock.waitForSleepers(1))
        await clock.advance(by: .seconds(5))
        await closing.value
        for sender in senders { await sender.value }
    }

    @Test func aPingStuckBehindAFullSendBufferStillTimesOut() async throws {
        let clock = TestClock()
        var configuration = WebSocket.Configuration(
            maximumMessageSize: 64 * 1024 * 1024, pingInterval: .seconds(30), pongTimeout: .seconds(10))
        configuration.clock = clock
        let (socket, side) = try await Self.connectToStalledPeer(configuration)
        defer { side.close() }
        var messages = socket.messages.makeAsyncIterator()
        let senders = try await Self.stallWrites(socket)
        #expect(await clock.waitForSleepers(1))
        await clock.advance(by: .seconds(30))
        // The pinger queued its ping and now sleeps towards the pong deadline.
        #expect(await clock.waitForSleepers(1))
        await clock.advance(by: .seconds(10))
        await #expect {
            _ = try await messages.next()
        } throws: { error in
            (error as? WebSocketError) == .pongTimeout
        }
        for sender in senders { await sender.value }
    }
}
