import Foundation
import Testing
import TidingsCore

@testable import TidingsNet

@Suite(.timeLimit(.minutes(1))) struct EngineIOClientTransportTests {
    static let handshake =
        #"0{"sid":"abc","upgrades":["websocket"],"pingInterval":25000,"pingTimeout":20000,"maxPayload":1000000}"#

    static func configuration(_ transports: EngineIOClient.Transports, version: EngineIOVersion = .v4)
        -> EngineIOClient.Configuration
    {
        EngineIOClient.Configuration(
            url: URL(string: "http://example.test:5000")!, transports: transports, version: version,
            timeout: .seconds(5))
    }

    @Test func pollingHandshakeThenPongsAndDeclaresDeathWithoutPings() async throws {
        let clock = TestClock()
        let http = FakePollingHTTP()
        http.respondToGet(Self.handshake)
        let client = try await EngineIOClient.connect(
            configuration: Self.configuration(.polling), clock: clock, http: http,
            webSocketFactory: FakeWebSocketFactory())
        #expect(client.handshake.sid == "abc")
        #expect(http.getURLs.first?.query?.contains("EIO=4&transport=polling") == true)
        var messages = client.messages.makeAsyncIterator()

        http.respondToGet("2\u{1E}4hello")
        #expect(try await messages.next() == .text("hello"))
        #expect(await http.waitForPosts(1) == ["3"])
        #expect(http.postURLs.first?.query?.contains("sid=abc") == true)

        // The ping re-armed the heartbeat: 45 s from it, not from the handshake.
        await clock.advance(by: .seconds(44))
        http.respondToGet("2")
        _ = await http.waitForPosts(2)
        await clock.advance(by: .seconds(44))
        await clock.advance(by: .seconds(1))
        await #expect(throws: EngineIOError.heartbeatTimeout) { _ = try await messages.next() }
        #expect(throws: EngineIOError.closed) { try client.send([.text("late")]) }
    }

    @Test func pollingPostsCarryAtMostSixteenPacketsInOrder() async throws {
        let clock = TestClock()
        let http = FakePollingHTTP()
        http.respondToGet(Self.handshake)
        http.holdPosts = true
        let client = try await EngineIOClient.connect(
            configuration: Self.configuration(.polling), clock: clock, http: http,
            webSocketFactory: FakeWebSocketFactory())
        try client.send([.text("first")])
        _ = await http.waitForPosts(1)
        try client.send((0..<40).map { .text("m\($0)") })
        http.holdPosts = false
        let bodies = await http.waitForPosts(4)
        #expect(bodies.count == 4)
        let packets = try bodies.map { try EngineIOPayload.decode(Array($0.utf8)) }
        #expect(packets.map(\.count) == [1, 16, 16, 8])
        #expect(packets.joined().map(\.text) == ["first"] + (0..<40).map { "m\($0)" })
        await client.close()
    }

    @Test func pollingPostsRespectMaxPayload() async throws {
        let http = FakePollingHTTP()
        http.respondToGet(#"0{"sid":"s","upgrades":[],"pingInterval":25000,"pingTimeout":20000,"maxPayload":100}"#)
        http.holdPosts = true
        let client = try await EngineIOClient.connect(
            configuration: Self.configuration(.polling), clock: TestClock(), http: http,
            webSocketFactory: FakeWebSocketFactory())
        try client.send([.text("x")])
        _ = await http.waitForPosts(1)
        try client.send(Array(repeating: .text(String(repeating: "a", count: 40)), count: 5))
        http.holdPosts = false
        let bodies = await http.waitForPosts(4)
        #expect(bodies.dropFirst().map { $0.utf8.count <= 100 } == [true, true, true])
        #expect(bodies.dropFirst().map { (try? EngineIOPayload.decode(Array($0.utf8)))?.count } == [2, 2, 1])
        await client.close()
    }

    @Test func v3ClientPingsAndFailsWithoutPong() async throws {
        let clock = TestClock()
        let http = FakePollingHTTP()
        http.respondToGet(
            EngineIOPayload.encode([EngineIOPacket(.open, .text(String(Self.handshake.dropFirst())))], version: .v3))
        let client = try await EngineIOClient.connect(
            configuration: Self.configuration(.polling, version: .v3), clock: clock, http: http,
            webSocketFactory: FakeWebSocketFactory())
        #expect(http.getURLs.first?.query?.contains("EIO=3") == true)
        var messages = client.messages.makeAsyncIterator()
        await clock.waitForSleepers(1)
        await clock.advance(by: .seconds(25))
        #expect(await http.waitForPosts(1) == ["1:2"])
        http.respondToGet(
            String(decoding: EngineIOPayload.encode([EngineIOPacket(.pong)], version: .v3), as: UTF8.self))
        await clock.advance(by: .seconds(20))
        await clock.advance(by: .seconds(25))
        #expect(await http.waitForPosts(2).count == 2)
        await clock.advance(by: .seconds(20))
        await #expect(throws: EngineIOError.heartbeatTimeout) { _ = try await messages.next() }
    }

    @Test func v3APingStuckInAPostStillCountsTowardsThePongTimeout() async throws {
        let clock = TestClock()
        let http = FakePollingHTTP()
        http.respondToGet(
            EngineIOPayload.encode([EngineIOPacket(.open, .text(String(Self.handshake.dropFirst())))], version: .v3))
        http.holdPosts = true
        defer { http.holdPosts = false }
        let client = try await EngineIOClient.connect(
            configuration: Self.configuration(.polling, version: .v3), clock: clock, http: http,
            webSocketFactory: FakeWebSocketFactory())
        var messages = client.messages.makeAsyncIterator()
        try client.send([.text("first")])
        #expect(await http.waitForPosts(1).count == 1)
        await clock.waitForSleepers(1)
        // The ping's POST never completes (a peer that stopped reading): the pong deadline runs anyway.
        await clock.advance(by: .seconds(25))
        await clock.advance(by: .seconds(20))
        await #expect(throws: EngineIOError.heartbeatTimeout) { _ = try await messages.next() }
        #expect(http.postBodies.count == 1)
    }

    @Test func webSocketOnlyReadsTheOpenPacketFirst() async throws {
        let sockets = FakeWebSocketFactory()
        sockets.script = { socket in socket.deliver(.text(Self.handshake)) }
        let client = try await EngineIOClient.connect(
            configuration: Self.configuration(.webSocket), clock: TestClock(), http: FakePollingHTTP(),
            webSocketFactory: sockets)
        #expect(await client.activeTransport == .webSocket)
        #expect(
            sockets.urls.first?.absoluteString.hasPrefix("ws://example.test:5000/socket.io/?EIO=4&transport=websocket")
                == true)
        let socket = try #require(sockets.sockets.first)
        socket.deliver(.binary([1, 2]))
        socket.deliver(.text("2"))
        var messages = client.messages.makeAsyncIterator()
        #expect(try await messages.next() == .binary([1, 2]))
        try client.send([.text("40"), .binary([3])])
        // The pong answers the ping whenever it is handled; the messages keep their order.
        let sent = await socket.waitForSent(3)
        #expect(sent.contains(.text("3")))
        #expect(sent.filter { $0 != .text("3") } == [.text("440"), .binary([3])])
        await client.close()
    }

    @Test func aWebSocketThatDoesNotOpenWithAnOpenPacketFails() async throws {
        let sockets = FakeWebSocketFactory()
        sockets.script = { socket in socket.deliver(.text("4hello")) }
        await #expect(throws: EngineIOError.handshakeFailed) {
            _ = try await EngineIOClient.connect(
                configuration: Self.configuration(.webSocket), clock: TestClock(), http: FakePollingHTTP(),
                webSocketFactory: sockets)
        }
        #expect(sockets.sockets.first?.isClosed == true)
    }

    @Test func upgradeProbesPausesPollingThenSwitches() async throws {
        let http = FakePollingHTTP()
        http.respondToGet(Self.handshake)
        let sockets = FakeWebSocketFactory()
        sockets.onSend = { socket, frame in
            if frame == .text("2probe") {
                socket.deliver(.text("3probe"))
                // Like python-engineio: once it saw the probe, every poll gets a noop at once.
                http.answerEveryPollWithNoop()
            }
        }
        let client = try await EngineIOClient.connect(
            configuration: Self.configuration(.pollingThenWebSocket), clock: TestClock(), http: http,
            webSocketFactory: sockets)
        let socket = try await sockets.waitForSocket()
        #expect(await socket.waitForSent(2) == [.text("2probe"), .text("5")])
        #expect(sockets.urls.first?.query?.contains("sid=abc") == true)
        for _ in 0..<1_000 where await client.activeTransport != .webSocket { await Task.yield() }
        #expect(await client.activeTransport == .webSocket)
        try client.send([.text("after")])
        #expect(await socket.waitForSent(3).last == .text("4after"))
        #expect(http.postBodies.isEmpty)
        socket.deliver(.text("4over ws"))
        var messages = client.messages.makeAsyncIterator()
        #expect(try await messages.next() == .text("over ws"))
        await client.close()
    }
}

// MARK: - Test doubles

/// Polling HTTP whose GETs wait for scripted bodies and whose POSTs are recorded.
final class FakePollingHTTP: EngineIOPollingHTTP, Sendable {
    private struct State {
        var bodies: [String] = []
        var waiters: [CheckedContinuation<String, any Error>] = []
        var _posts: [String] = []
        var _getURLs: [URL] = []
        var _postURLs: [URL] = []
        var _holdPosts = false
        var noopForever = false
    }
    private let state = LockedState(State())

    var postBodies: [String] { state.withLock { locked in locked._posts } }
    var getURLs: [URL] { state.withLock { locked in locked._getURLs } }
    var postURLs: [URL] { state.withLock { locked in locked._postURLs } }
    var holdPosts: Bool {
        get { state.withLock { locked in locked._holdPosts } }
        set { state.withLock { locked in locked._holdPosts = newValue } }
    }

    func respondToGet(_ body: String) {
        let waiter: CheckedContinuation<String, any Error>? = state.withLock { locked in
            if locked.waiters.isEmpty {
                locked.bodies.append(body)
                return nil
            }
            return locked.waiters.removeFirst()
        }
        waiter?.resume(returning: body)
    }

    func answerEveryPollWithNoop() {
        let released: [CheckedContinuation<String, any Error>] = state.withLock { locked in
            locked.noopForever = true
            defer { locked.waiters = [] }
            return locked.waiters
        }
        for waiter in released { waiter.resume(returning: "6") }
    }

    func respondToGet(_ body: [UInt8]) { respondToGet(String(decoding: body, as: UTF8.self)) }

    func get(_ url: URL, headers: [String: String]) async throws -> [UInt8] {
        let body: String = try await withCheckedThrowingContinuation { continuation in
            let ready: String? = state.withLock { locked in
                locked._getURLs.append(url)
                if locked.noopForever { return "6" }
                if locked.bodies.isEmpty {
                    locked.waiters.append(continuation)
                    return nil
                }
                return locked.bodies.removeFirst()
            }
            if let ready { continuation.resume(returning: ready) }
        }
        return Array(body.utf8)
    }

    func post(_ url: URL, body: [UInt8], headers: [String: String]) async throws -> [UInt8] {
        while holdPosts, state.withLock({ locked in !locked._posts.isEmpty }) { await Task.yield() }
        state.withLock { locked in
            locked._postURLs.append(url)
            locked._posts.append(String(decoding: body, as: UTF8.self))
        }
        return Array("ok".utf8)
    }

    /// Yields until `count` POSTs arrived; returns every POST body.
    func waitForPosts(_ count: Int) async -> [String] {
        for _ in 0..<100_000 where postBodies.count < count { await Task.yield() }
        return postBodies
    }
}

/// An in-memory WebSocket: records what the client sends, delivers what the test scripts.
final class FakeWebSocket: EngineIOWebSocket, Sendable {
    let frames: AsyncThrowingStream<EngineIOFrame, any Error>
    private let continuation: AsyncThrowingStream<EngineIOFrame, any Error>.Continuation
    private struct State {
        var _sent: [EngineIOFrame] = []
        var _closed = false
        var onSend: (@Sendable (FakeWebSocket, EngineIOFrame) -> Void)?
    }
    private let state = LockedState(State())

    init() {
        (frames, continuation) = AsyncThrowingStream.makeStream(of: EngineIOFrame.self)
    }

    var sent: [EngineIOFrame] { state.withLock { locked in locked._sent } }
    var isClosed: Bool { state.withLock { locked in locked._closed } }
    var onSend: (@Sendable (FakeWebSocket, EngineIOFrame) -> Void)? {
        get { state.withLock { $0.onSend } }
        set { state.withLock { $0.onSend = newValue } }
    }

    func deliver(_ frame: EngineIOFrame) { continuation.yield(frame) }

    func send(_ frame: EngineIOFrame) async throws {
        try state.withLock { locked in
            if locked._closed { throw EngineIOError.closed }
            locked._sent.append(frame)
        }
        onSend?(self, frame)
    }

    func close() async {
        state.withLock { locked in locked._closed = true }
        continuation.finish()
    }

    func waitForSent(_ count: Int) async -> [EngineIOFrame] {
        for _ in 0..<100_000 where sent.count < count { await Task.yield() }
        return sent
    }
}

final class FakeWebSocketFactory: EngineIOWebSocketFactory, Sendable {
    private struct State {
        var _sockets: [FakeWebSocket] = []
        var _urls: [URL] = []
        var script: (@Sendable (FakeWebSocket) -> Void)?
        var onSend: (@Sendable (FakeWebSocket, EngineIOFrame) -> Void)?
    }
    private let state = LockedState(State())

    var sockets: [FakeWebSocket] { state.withLock { locked in locked._sockets } }
    var urls: [URL] { state.withLock { locked in locked._urls } }
    var script: (@Sendable (FakeWebSocket) -> Void)? {
        get { state.withLock { $0.script } }
        set { state.withLock { $0.script = newValue } }
    }
    var onSend: (@Sendable (FakeWebSocket, EngineIOFrame) -> Void)? {
        get { state.withLock { $0.onSend } }
        set { state.withLock { $0.onSend = newValue } }
    }

    func connect(to url: URL, headers: [String: String]) async throws -> any EngineIOWebSocket {
        let socket = FakeWebSocket()
        socket.onSend = onSend
        state.withLock { locked in
            locked._sockets.append(socket)
            locked._urls.append(url)
        }
        script?(socket)
        return socket
    }

    func waitForSocket() async throws -> FakeWebSocket {
        for _ in 0..<100_000 where sockets.isEmpty { await Task.yield() }
        return try #require(sockets.first)
    }
}
