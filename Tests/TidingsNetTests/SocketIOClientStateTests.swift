import Foundation
import Testing
import TidingsCore

@testable import TidingsNet

@Suite(.timeLimit(.minutes(1))) struct SocketIOClientStateTests {
    @Test func connectSendsAuthAndAnnouncesConnect() async throws {
        let server = FakeSocketIOServer()
        let client = SocketIOClient(connector: server, clock: TestClock())
        var events = client.events.makeAsyncIterator()
        try await client.connect(namespace: "/chat", auth: ["token": "t"])
        #expect(await server.received(0) == [#"0/chat,{"token":"t"}"#])
        #expect(await events.next()?.label == "connect")
        try await client.emit("hello", 1, "x")
        await server.waitForMessages(2)
        #expect(await server.received(0).last == #"2/chat,["hello",1,"x"]"#)
        #expect(await client.isConnected)
    }

    @Test func acksResolveAndTimeOutOnTheVirtualClock() async throws {
        let clock = TestClock()
        let server = FakeSocketIOServer()
        let client = SocketIOClient(connector: server, clock: clock)
        try await client.connect()
        let answered = Task { try await client.emitWithAck("echo", "a", timeout: .seconds(5)) }
        await server.waitForMessages(2)
        #expect(await server.received(0)[1] == #"20["echo","a"]"#)
        await server.push(0, #"30["a",2]"#)
        #expect(try await answered.value == ["a", 2])

        let unanswered = Task { try await client.emitWithAck("silent", timeout: .seconds(5)) }
        await server.waitForMessages(3)
        await clock.advance(by: .seconds(4))
        await server.push(0, #"2["tick"]"#)  // not an ack: the wait goes on
        await clock.advance(by: .seconds(1))
        await #expect(throws: SocketIOError.ackTimeout) { try await unanswered.value }
        // A late ack for a timed-out id is ignored.
        await server.push(0, #"31[]"#)
    }

    @Test func aShorterAckTimeoutAfterALongerOneFiresFirst() async throws {
        let clock = TestClock()
        let server = FakeSocketIOServer()
        let client = SocketIOClient(connector: server, clock: clock)
        try await client.connect()
        let long = Task { try await client.emitWithAck("long", timeout: .seconds(60)) }
        await server.waitForMessages(2)
        let short = Task { try await client.emitWithAck("short", timeout: .seconds(2)) }
        await server.waitForMessages(3)
        await clock.advance(by: .seconds(2))
        await #expect(throws: SocketIOError.ackTimeout) { try await short.value }
        await clock.advance(by: .seconds(57))
        await server.push(0, #"30["in time"]"#)
        #expect(try await long.value == ["in time"])
    }

    @Test func aLegacyServerConnectsTheDefaultNamespaceByItself() async throws {
        let server = FakeSocketIOServer()
        await server.setLegacy(true)
        let client = SocketIOClient(
            connector: server, configuration: .init(legacyProtocol: true), clock: TestClock())
        var events = client.events.makeAsyncIterator()
        try await client.connect(auth: ["ignored": true])
        #expect(await events.next()?.label == "connect")
        #expect(await server.received(0) == [])
        try await client.emit("hi")
        await server.waitForMessages(1)
        #expect(await server.received(0) == [#"2["hi"]"#])

        let admin = SocketIOClient(
            connector: server, configuration: .init(legacyProtocol: true), clock: TestClock())
        try await admin.connect(namespace: "/admin")
        #expect(await server.received(1) == ["0/admin,"])
    }

    @Test func eventsBeforeTheConnectReplyAreDeliveredAfterConnectInOrder() async throws {
        let server = FakeSocketIOServer()
        await server.setEarlyEvents([#"2["welcome",1]"#, #"2["welcome",2]"#])
        let client = SocketIOClient(connector: server, clock: TestClock())
        var events = client.events.makeAsyncIterator()
        try await client.connect()
        #expect(await events.next()?.label == "connect")
        #expect(await events.next()?.label == #"event welcome [1]"#)
        #expect(await events.next()?.label == #"event welcome [2]"#)
    }

    @Test func aFloodBeforeTheConnectReplyFailsTheAttemptInsteadOfBufferingIt() async throws {
        let server = FakeSocketIOServer()
        await server.setEarlyEvents((0..<50).map { #"2["flood",\#($0)]"# })
        let client = SocketIOClient(
            connector: server, configuration: .init(reconnects: false, maximumBufferedEvents: 8), clock: TestClock())
        await #expect(throws: SocketIOError.tooManyEarlyEvents) { try await client.connect() }
        #expect(await !client.isConnected)
        // Within the limit the same server's events all arrive after the connect.
        await server.setEarlyEvents((0..<8).map { #"2["flood",\#($0)]"# })
        var events = client.events.makeAsyncIterator()
        try await client.connect()
        #expect(await events.next()?.label == "connect")
        for index in 0..<8 {
            let label = await events.next()?.label
            #expect(label == "event flood [\(index)]", "\(String(describing: label))")
        }
    }

    @Test func anAckIDStillPendingIsSkippedWhenTheCounterWraps() async throws {
        let max = Int(Int32.max)
        let server = FakeSocketIOServer()
        let client = SocketIOClient(connector: server, clock: TestClock())
        try await client.connect()
        let pendingAtZero = Task { try await client.emitWithAck("first", timeout: .seconds(60)) }
        await server.waitForMessages(2)
        await client.setNextAckID(max)
        let atMax = Task { try await client.emitWithAck("last", timeout: .seconds(60)) }
        await server.waitForMessages(3)
        let wrapped = Task { try await client.emitWithAck("wrapped", timeout: .seconds(60)) }
        await server.waitForMessages(4)
        #expect(
            Array(await server.received(0).dropFirst()) == [#"20["first"]"#, "2\(max)[\"last\"]", #"21["wrapped"]"#])
        // Each answer resolves its own emit only.
        await server.push(0, #"31["to wrapped"]"#)
        #expect(try await wrapped.value == ["to wrapped"])
        await server.push(0, "3\(max)[\"to last\"]")
        #expect(try await atMax.value == ["to last"])
        await server.push(0, #"30["to first"]"#)
        #expect(try await pendingAtZero.value == ["to first"])
    }

    @Test func serverAcksAreAnsweredOnceWithTheirID() async throws {
        let server = FakeSocketIOServer()
        let client = SocketIOClient(connector: server, clock: TestClock())
        var events = client.events.makeAsyncIterator()
        try await client.connect()
        _ = await events.next()
        await server.push(0, #"27["question",{"q":1}]"#)
        guard case .event(let name, let arguments, let ack?) = await events.next() else {
            Issue.record("expected an event with an ack")
            return
        }
        #expect(name == "question" && arguments == [["q": 1]])
        #expect(await ack("yes", 42))
        #expect(await ack("again") == false)
        await server.waitForMessages(2)
        #expect(await server.received(0) == ["0", #"37["yes",42]"#])
    }

    @Test func binaryAttachmentsTravelBothWays() async throws {
        let server = FakeSocketIOServer()
        let client = SocketIOClient(connector: server, clock: TestClock())
        var events = client.events.makeAsyncIterator()
        try await client.connect()
        _ = await events.next()
        try await client.emit("upload", .binary([1, 2, 3]), "name")
        await server.waitForMessages(3)
        let sent = await server.sessions[0].sent
        #expect(
            sent[1] == .text(#"51-["upload",{"_placeholder":true,"num":0},"name"]"#)
                || sent[1] == .text(#"51-["upload",{"num":0,"_placeholder":true},"name"]"#))
        #expect(sent[2] == .binary([1, 2, 3]))

        await server.push(0, #"51-["photo",{"_placeholder":true,"num":0}]"#)
        await server.sessions[0].deliver(.binary([9, 8]))
        guard case .event("photo", let arguments, nil) = await events.next() else {
            Issue.record("expected the photo event")
            return
        }
        #expect(arguments == [.binary([9, 8])])
    }

    @Test func aRefusedConnectThrowsTheServersReason() async throws {
        let server = FakeSocketIOServer()
        await server.setRefusal(#"4{"message":"Not authorized","data":{"code":401}}"#)
        let client = SocketIOClient(connector: server, clock: TestClock())
        do {
            try await client.connect(auth: ["token": "bad"])
            Issue.record("connect should fail")
        } catch let error as SocketIOError {
            #expect(error == .connectRefused)
            #expect(error.detail == "Not authorized")
            #expect(error.data == ["code": 401])
        }
        #expect(await client.isConnected == false)
        await #expect(throws: SocketIOError.notConnected) { try await client.emit("x") }
    }

    @Test func emitsBeforeConnectFail() async throws {
        let client = SocketIOClient(connector: FakeSocketIOServer(), clock: TestClock())
        await #expect(throws: SocketIOError.notConnected) { try await client.emit("x") }
    }

    @Test func aConnectWithoutAnswerTimesOut() async throws {
        let clock = TestClock()
        let server = FakeSocketIOServer()
        await server.setSilent(true)
        let client = SocketIOClient(
            connector: server, configuration: .init(connectTimeout: .seconds(3)), clock: clock)
        let connecting = Task { try await client.connect() }
        await clock.waitForSleepers(1)
        await clock.advance(by: .seconds(3))
        await #expect(throws: SocketIOError.ackTimeout) { try await connecting.value }
    }

    @Test func serverDisconnectEndsWithoutReconnecting() async throws {
        let clock = TestClock()
        let server = FakeSocketIOServer()
        let client = SocketIOClient(connector: server, clock: clock)
        var events = client.events.makeAsyncIterator()
        try await client.connect()
        _ = await events.next()
        let pending = Task { try await client.emitWithAck("slow", timeout: .seconds(60)) }
        await server.waitForMessages(2)
        await server.push(0, "1")
        #expect(await events.next()?.label == "disconnect serverDisconnect")
        await #expect(throws: SocketIOError.disconnected) { try await pending.value }
        await clock.run(maxSteps: 20)
        #expect(await server.connectCount == 1)
        await #expect(throws: SocketIOError.notConnected) { try await client.emit("x") }
    }

    @Test func clientDisconnectSendsTheDisconnectPacketAndFailsAcks() async throws {
        let server = FakeSocketIOServer()
        let client = SocketIOClient(connector: server, clock: TestClock())
        var events = client.events.makeAsyncIterator()
        try await client.connect(namespace: "/n")
        _ = await events.next()
        let pending = Task { try await client.emitWithAck("slow", timeout: .seconds(60)) }
        await server.waitForMessages(2)
        await client.disconnect()
        await #expect(throws: SocketIOError.closed) { try await pending.value }
        #expect(await events.next()?.label == "disconnect clientDisconnect")
        #expect(await server.received(0).last == "1/n,")
        #expect(await server.sessions[0].isClosed)
    }
}

// MARK: - In-memory Engine.IO

extension SocketIOClient.Event {
    /// A compact, comparable rendering of an event for assertions.
    var label: String {
        switch self {
        case .connect: return "connect"
        case .disconnect(let reason):
            if case .transportError = reason { return "disconnect transportError" }
            return "disconnect \(reason)"
        case .reconnectAttempt(let attempt): return "reconnectAttempt \(attempt)"
        case .connectError(let error): return "connectError \(error.code)"
        case .event(let name, let arguments, _): return "event \(name) \(JSONValue.array(arguments).jsonString())"
        }
    }
}

/// One in-memory Engine.IO session: what the client sent, and a way to deliver server messages.
final class FakeEngineIOSession: EngineIOSession, Sendable {
    let messages: AsyncThrowingStream<EngineIOPacket.Body, any Error>
    private let continuation: AsyncThrowingStream<EngineIOPacket.Body, any Error>.Continuation
    private struct State {
        var _sent: [EngineIOPacket.Body] = []
        var _closed = false
    }
    private let state = LockedState(State())
    private let onSend: @Sendable (FakeEngineIOSession, [EngineIOPacket.Body]) -> Void

    init(onSend: @escaping @Sendable (FakeEngineIOSession, [EngineIOPacket.Body]) -> Void) {
        (messages, continuation) = AsyncThrowingStream.makeStream(of: EngineIOPacket.Body.self)
        self.onSend = onSend
    }

    var sent: [EngineIOPacket.Body] { state.withLock { locked in locked._sent } }
    var isClosed: Bool { state.withLock { locked in locked._closed } }

    func send(_ messages: [EngineIOPacket.Body]) throws {
        try state.withLock { locked in
            if locked._closed { throw EngineIOError.closed }
            locked._sent += messages
        }
        onSend(self, messages)
    }

    func close() async {
        state.withLock { locked in locked._closed = true }
        continuation.finish()
    }

    func deliver(_ message: EngineIOPacket.Body) {
        continuation.yield(message)
    }

    /// Ends the session as a dropped connection would.
    func fail() {
        state.withLock { locked in locked._closed = true }
        continuation.finish(throwing: EngineIOError.transportFailed)
    }
}

/// A scripted Socket.IO server behind an in-memory connector.
actor FakeSocketIOServer: EngineIOConnector {
    private(set) var sessions: [FakeEngineIOSession] = []
    private(set) var connectCount = 0
    private var refusal: String?
    private var silent = false
    private var earlyEvents: [String] = []
    private var failingConnects = 0

    private var legacy = false

    func setRefusal(_ packet: String?) { refusal = packet }
    /// Like socket.io 2.x: every new session gets `40` for "/" unasked.
    func setLegacy(_ value: Bool) { legacy = value }
    func setSilent(_ value: Bool) { silent = value }
    func setEarlyEvents(_ packets: [String]) { earlyEvents = packets }
    /// The next `count` connects fail as an unreachable server would.
    func failNextConnects(_ count: Int) { failingConnects = count }

    nonisolated func connect() async throws -> any EngineIOSession {
        try await openSession()
    }

    private func openSession() throws -> any EngineIOSession {
        connectCount += 1
        if failingConnects > 0 {
            failingConnects -= 1
            throw EngineIOError.transportFailed
        }
        let session = FakeEngineIOSession { [weak self] session, messages in
            Task { await self?.received(messages, on: session) }
        }
        sessions.append(session)
        if legacy { session.deliver(.text("0")) }
        return session
    }

    private func received(_ messages: [EngineIOPacket.Body], on session: FakeEngineIOSession) {
        for message in messages {
            guard case .text(let text) = message, text.first == "0" else { continue }
            guard !silent else { continue }
            if let refusal {
                session.deliver(.text(refusal))
                continue
            }
            for event in earlyEvents { session.deliver(.text(event)) }
            let namespace = (try? SocketIOPacket.decode(text))?.namespace ?? "/"
            session.deliver(.text(namespace == "/" ? #"0{"sid":"s"}"# : #"0\#(namespace),{"sid":"s"}"#))
        }
    }

    /// The text messages that session `index` sent.
    func received(_ index: Int) -> [String] {
        guard sessions.indices.contains(index) else { return [] }
        return sessions[index].sent.compactMap { if case .text(let text) = $0 { text } else { nil } }
    }

    /// Delivers a text message to the client on session `index`.
    func push(_ index: Int, _ text: String) {
        sessions[index].deliver(.text(text))
    }

    /// Waits (yielding, not sleeping) until the newest session has sent `count` messages.
    func waitForMessages(_ count: Int, maxYields: Int = 100_000) async {
        for _ in 0..<maxYields {
            if let last = sessions.last, last.sent.count >= count { return }
            await Task.yield()
        }
    }

    /// Waits until at least `count` sessions were opened.
    func waitForSessions(_ count: Int, maxYields: Int = 100_000) async {
        for _ in 0..<maxYields {
            if sessions.count >= count { return }
            await Task.yield()
        }
    }
}
