import Foundation
import Testing
import TidingsCore

@testable import TidingsNet

/// A loopback server that accepts every connection and then neither reads nor writes.
final class SilentServer: Sendable {
    let listener: TCPListener
    private let held = LockedState<[TCPConnection]>([])
    private let task: Task<Void, Never>
    var port: Int { listener.port }

    init() throws {
        let listener = try TCPListener.bind()
        self.listener = listener
        let held = self.held
        task = Task {
            while let connection = try? await listener.accept() {
                held.withLock { $0.append(connection) }
            }
        }
    }

    /// How many connections were accepted so far.
    var acceptedCount: Int { held.withLock { $0.count } }

    /// Waits (by yielding, never sleeping) until `count` connections were accepted.
    func waitForAccepted(_ count: Int) async throws {
        while acceptedCount < count { try Task.checkCancellation(); await Task.yield() }
    }

    func stop() {
        task.cancel()
        listener.close()
        held.withLock { connections in
            connections.forEach { $0.close() }
            connections = []
        }
    }
}

/// Every handshake and every read against a server that accepts TCP and never answers ends with a
/// typed error (or on cancellation), on each transport.
@Suite(.timeLimit(.minutes(1))) struct SilentServerTests {
    static func engineConfiguration(_ port: Int, _ transports: EngineIOClient.Transports, timeout: Duration)
        -> EngineIOClient.Configuration
    {
        EngineIOClient.Configuration(
            url: URL(string: "http://127.0.0.1:\(port)")!, transports: transports, timeout: timeout)
    }

    @Test func pollingHandshakeTimesOut() async throws {
        let server = try SilentServer()
        defer { server.stop() }
        let connector = EngineIOClientConnector(
            configuration: Self.engineConfiguration(server.port, .polling, timeout: .seconds(1)))
        await #expect(throws: EngineIOError.timedOut) { _ = try await connector.connect() }
    }

    @Test func webSocketOnlyHandshakeTimesOut() async throws {
        let server = try SilentServer()
        defer { server.stop() }
        let connector = EngineIOClientConnector(
            configuration: Self.engineConfiguration(server.port, .webSocket, timeout: .seconds(1)))
        await #expect(throws: EngineIOError.timedOut) { _ = try await connector.connect() }
    }

    @Test func webSocketOnlyWithoutAnOpenPacketTimesOut() async throws {
        let server = try LoopbackWebSocketServer()
        let serverSide = Task {
            let side = try await server.accept()
            try await side.acceptUpgrade()
            // Upgraded, then silent: the open packet never comes.
            _ = try? await side.readUntilEOF()
        }
        defer { serverSide.cancel() }
        let connector = EngineIOClientConnector(
            configuration: Self.engineConfiguration(server.port, .webSocket, timeout: .seconds(1)))
        await #expect(throws: EngineIOError.timedOut) { _ = try await connector.connect() }
    }

    @Test(arguments: [EngineIOClient.Transports.polling, .webSocket])
    func cancellingAPendingHandshakeEndsIt(_ transports: EngineIOClient.Transports) async throws {
        let server = try SilentServer()
        defer { server.stop() }
        let connector = EngineIOClientConnector(
            configuration: Self.engineConfiguration(server.port, transports, timeout: .seconds(600)))
        let attempt = Task { try await connector.connect() }
        try await server.waitForAccepted(1)
        attempt.cancel()
        await #expect(throws: CancellationError.self) { _ = try await attempt.value }
    }

    @Test func pollingResponseReadIsBounded() async throws {
        let server = try SilentServer()
        defer { server.stop() }
        let pool = EngineIOHTTPConnectionPool(responseTimeout: .seconds(1))
        let url = URL(string: "http://127.0.0.1:\(server.port)/socket.io/")!
        await #expect(throws: EngineIOError.timedOut) { _ = try await pool.get(url, headers: [:]) }
    }

    @Test func pollingTLSHandshakeIsBoundedByTheConnectTimeout() async throws {
        let server = try SilentServer()
        defer { server.stop() }
        let pool = EngineIOHTTPConnectionPool(connectTimeout: .seconds(1))
        let url = URL(string: "https://127.0.0.1:\(server.port)/socket.io/")!
        await #expect(throws: EngineIOError.timedOut) { _ = try await pool.get(url, headers: [:]) }
    }

    @Test func plainWebSocketHandshakeTimesOut() async throws {
        let server = try SilentServer()
        defer { server.stop() }
        let configuration = WebSocket.Configuration(connectTimeout: .seconds(1))
        let url = URL(string: "ws://127.0.0.1:\(server.port)/")!
        await #expect(throws: WebSocketError.self) {
            do {
                _ = try await WebSocket.connect(to: url, configuration: configuration)
            } catch let error as WebSocketError {
                #expect(error == .timedOut)
                throw error
            }
        }
    }

    @Test func httpClientRequestTimesOut() async throws {
        let server = try SilentServer()
        defer { server.stop() }
        let client = HTTPClient(configuration: .init(timeout: .seconds(1)))
        let request = HTTPRequest(url: URL(string: "http://127.0.0.1:\(server.port)/")!)
        await #expect(throws: HTTPError.self) {
            do {
                _ = try await client.send(request)
            } catch let error as HTTPError {
                #expect(error == .timedOut)
                throw error
            }
        }
    }
}

/// The first session comes from an in-memory server; every later connect goes to a real server that
/// accepts and never answers, as a server that hangs during an outage would.
struct HangingReconnectConnector: EngineIOConnector {
    let first: FakeSocketIOServer
    let hanging: EngineIOClientConnector
    let calls = LockedState(0)

    func connect() async throws -> any EngineIOSession {
        let call = calls.withLock { count -> Int in
            count += 1
            return count
        }
        return call == 1 ? try await first.connect() : try await hanging.connect()
    }
}

@Suite(.timeLimit(.minutes(1))) struct SilentServerReconnectTests {
    @Test func reconnectingKeepsGoingWhenAnAttemptMeetsASilentServer() async throws {
        let silent = try SilentServer()
        defer { silent.stop() }
        let clock = TestClock()
        let connector = HangingReconnectConnector(
            first: FakeSocketIOServer(),
            hanging: EngineIOClientConnector(
                configuration: SilentServerTests.engineConfiguration(silent.port, .polling, timeout: .seconds(1))))
        let client = SocketIOClient(connector: connector, clock: clock, random: { 0 })
        var events = client.events.makeAsyncIterator()
        try await client.connect()
        #expect(await events.next()?.label == "connect")
        await connector.first.sessions[0].fail()
        #expect(await events.next()?.label == "disconnect transportError")
        #expect(await clock.waitForSleepers(1))
        await clock.advance(by: .seconds(1))
        #expect(await events.next()?.label == "reconnectAttempt 1")
        // The attempt ends on its own (1 s of real time against the silent server) ...
        #expect(await events.next()?.label == "connectError transportFailed")
        // ... and the loop goes on to the next one.
        #expect(await clock.waitForSleepers(1))
        await clock.advance(by: .seconds(2))
        #expect(await events.next()?.label == "reconnectAttempt 2")
        await client.disconnect()
    }
}
