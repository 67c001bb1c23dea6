import Foundation
import Testing
import TidingsCore

@testable import TidingsNet

/// An Engine.IO WebSocket whose writes never complete (the peer stopped reading) until it is closed.
final class StuckWebSocket: EngineIOWebSocket, Sendable {
    let frames: AsyncThrowingStream<EngineIOFrame, any Error>
    private let continuation: AsyncThrowingStream<EngineIOFrame, any Error>.Continuation
    private let state = LockedState<(closed: Bool, sendsStarted: Int, waiters: [CheckedContinuation<Void, any Error>])>(
        (false, 0, []))

    init(open: String) {
        (frames, continuation) = AsyncThrowingStream.makeStream(of: EngineIOFrame.self)
        continuation.yield(.text(open))
    }

    var sendsStarted: Int { state.withLock { $0.sendsStarted } }

    func send(_ frame: EngineIOFrame) async throws {
        try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
            let closed = state.withLock { state -> Bool in
                state.sendsStarted += 1
                if !state.closed { state.waiters.append(waiter) }
                return state.closed
            }
            if closed { waiter.resume(throwing: EngineIOError.closed) }
        }
    }

    func close() async {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.closed = true
            defer { state.waiters = [] }
            return state.waiters
        }
        waiters.forEach { $0.resume(throwing: EngineIOError.closed) }
        continuation.finish()
    }
}

final class StuckWebSocketFactory: EngineIOWebSocketFactory, Sendable {
    let socket = StuckWebSocket(open: EngineIOClientTransportTests.handshake)

    func connect(to url: URL, headers: [String: String]) async throws -> any EngineIOWebSocket { socket }
}

@Suite(.timeLimit(.minutes(1))) struct EngineIOStuckWriteTests {
    @Test func closeEndsOnTheTimeoutWhenAWriteIsStuck() async throws {
        let clock = TestClock()
        let factory = StuckWebSocketFactory()
        let client = try await EngineIOClient.connect(
            configuration: EngineIOClientTransportTests.configuration(.webSocket), clock: clock,
            http: FakePollingHTTP(), webSocketFactory: factory)
        try client.send([.text("4stuck")])
        while factory.socket.sendsStarted == 0 { try Task.checkCancellation(); await Task.yield() }
        let closing = Task { await client.close() }
        // The heartbeat and the close timer.
        #expect(await clock.waitForSleepers(2))
        await clock.advance(by: .seconds(5))
        await closing.value
        #expect(throws: EngineIOError.closed) { try client.send([.text("late")]) }
    }
}

@Suite(.timeLimit(.minutes(1))) struct SocketIOConnectCancellationTests {
    @Test func cancellingAConnectThatTheServerNeverAnswersEndsIt() async throws {
        let server = FakeSocketIOServer()
        await server.setSilent(true)
        let client = SocketIOClient(connector: server, clock: TestClock())
        let connecting = Task { try await client.connect() }
        await server.waitForMessages(1)
        connecting.cancel()
        await #expect(throws: CancellationError.self) { try await connecting.value }
        #expect(await !client.isConnected)
        // The attempt is over: a new connect starts a new session.
        await server.setSilent(false)
        try await client.connect()
        #expect(await server.connectCount == 2)
    }
}
