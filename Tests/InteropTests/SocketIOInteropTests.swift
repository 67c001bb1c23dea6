import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsNet

/// Tidings' Socket.IO client against python-socketio 5.18 (aiohttp) on loopback
/// (`Tests/Peers/socketio_server.py`).
///
/// Tests share one peer per set of arguments, except those that kill and restart theirs; the one
/// server-wide state, `count`, is only used with a key no other test uses (`many`) on a shared peer.
@Suite(.timeLimit(.minutes(2))) struct SocketIOInteropTests {
    static let allTransports: [EngineIOClient.Transports] = [.polling, .pollingThenWebSocket, .webSocket]

    @Test(arguments: allTransports)
    func acksRoundTripOverEveryTransport(_ transports: EngineIOClient.Transports) async throws {
        let server = try await PythonPeer.shared("socketio_server.py")
        let client = SocketIOClient(url: server.url, transports: transports)
        let recorder = SocketIOEventRecorder(client)
        try await client.connect()
        let arguments: [JSONValue] = [1, "two", ["three": [3.5, nil, true]], "é🎉"]
        #expect(try await client.emitWithAck("echo", arguments: arguments, timeout: .seconds(10)) == arguments)
        if transports == .pollingThenWebSocket {
            #expect(try await recorder.eventually { await client.activeTransport == .webSocket })
        } else {
            #expect(await client.activeTransport == (transports == .polling ? .polling : .webSocket))
        }
        // Still works after the upgrade.
        #expect(try await client.emitWithAck("echo", "after", timeout: .seconds(10)) == ["after"])
        await client.disconnect()
    }

    @Test(arguments: allTransports)
    func binaryAttachmentsTravelBothWays(_ transports: EngineIOClient.Transports) async throws {
        let server = try await PythonPeer.shared("socketio_server.py")
        let client = SocketIOClient(url: server.url, transports: transports)
        try await client.connect()
        let small: [UInt8] = [0, 1, 2, 255]
        #expect(try await client.emitWithAck("binary", .binary(small)) == [4, .binary(small.reversed())])
        let large = (0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let reply = try await client.emitWithAck("echo", .binary(large), ["nested": .binary([9])], "text")
        #expect(reply == [.binary(large), ["nested": .binary([9])], "text"])
        await client.disconnect()
    }

    @Test func serverAcksAreAnsweredByTheClient() async throws {
        let server = try await PythonPeer.shared("socketio_server.py")
        let client = SocketIOClient(url: server.url, transports: .webSocket)
        let answering = Task {
            for await event in client.events {
                if case .event("question", let arguments, let ack?) = event {
                    await ack(.string("answer to \(arguments.first?.stringValue ?? "?")"))
                }
            }
        }
        defer { answering.cancel() }
        try await client.connect()
        #expect(try await client.emitWithAck("ask", "life") == ["answer to life"])
        await client.disconnect()
    }

    @Test func namespacesAndAuthPayloads() async throws {
        let server = try await PythonPeer.shared("socketio_server.py")
        let admin = SocketIOClient(url: server.url, transports: .polling)
        try await admin.connect(namespace: "/admin", auth: ["token": "secret"])
        let whoami = try await admin.emitWithAck("whoami")
        #expect(whoami.first?["namespace"] == "/admin")
        await admin.disconnect()

        let intruder = SocketIOClient(url: server.url, transports: .webSocket)
        await #expect(throws: SocketIOError.connectRefused) {
            try await intruder.connect(namespace: "/admin", auth: ["token": "guess"])
        }

        let user = SocketIOClient(url: server.url, transports: .webSocket)
        try await user.connect(auth: ["user": "ana", "n": 7])
        #expect(try await user.emitWithAck("auth") == [["user": "ana", "n": 7]])
        await user.disconnect()

        let rejected = SocketIOClient(url: server.url)
        do {
            try await rejected.connect(auth: ["reject": true])
            Issue.record("the server should refuse")
        } catch let error as SocketIOError {
            #expect(error == .connectRefused)
            #expect(error.detail == "Not authorized")
            #expect(error.data == ["code": 401])
        }
    }

    @Test func serverInitiatedDisconnectIsReportedAndNotRetried() async throws {
        let server = try await PythonPeer.shared("socketio_server.py")
        let client = SocketIOClient(url: server.url, transports: .pollingThenWebSocket)
        let recorder = SocketIOEventRecorder(client)
        try await client.connect()
        try await client.emit("disconnect_me")
        #expect(try await recorder.eventually { await recorder.labels.contains("disconnect serverDisconnect") })
        #expect(await client.isConnected == false)
        #expect(await recorder.labels.filter { $0.hasPrefix("reconnectAttempt") }.isEmpty)
    }

    @Test(arguments: [false, true])
    func eventsSentBeforeTheConnectReplyAreKept(alwaysConnect: Bool) async throws {
        let server = try await PythonPeer.shared(
            "socketio_server.py", arguments: alwaysConnect ? ["--always-connect"] : [])
        for transports in Self.allTransports {
            let client = SocketIOClient(url: server.url, transports: transports)
            let recorder = SocketIOEventRecorder(client)
            try await client.connect(auth: ["early": 3])
            #expect(try await recorder.eventually { await recorder.labels.count >= 4 })
            #expect(
                await recorder.labels.prefix(4) == [
                    "connect", "event welcome [0]", "event welcome [1]", "event welcome [2]",
                ])
            await client.disconnect()
        }
    }

    @Test func manyQueuedPacketsOverPollingAreSplitIntoAcceptedPosts() async throws {
        let server = try await PythonPeer.shared("socketio_server.py")
        let client = SocketIOClient(url: server.url, transports: .polling)
        let recorder = SocketIOEventRecorder(client)
        try await client.connect()
        for _ in 0..<100 { try await client.emit("count", "many") }
        let pending = (0..<40).map { index in Task { try await client.emitWithAck("echo", .int(Int64(index))) } }
        for (index, task) in pending.enumerated() { #expect(try await task.value == [.int(Int64(index))]) }
        #expect(try await client.emitWithAck("stats") == [["many": 100]])
        #expect(try await client.emitWithAck("burst", 50) == [50])
        #expect(
            try await recorder.eventually { await recorder.labels.filter { $0.hasPrefix("event tick") }.count == 50 })
        #expect(await recorder.labels.filter { $0.hasPrefix("event tick") }.last == "event tick [49]")
        await client.disconnect()
    }

    @Test(arguments: [EngineIOClient.Transports.polling, .webSocket])
    func bufferedEmitsArriveOnceAfterTheServerRestarts(_ transports: EngineIOClient.Transports) async throws {
        // A short heartbeat: while the server is down its port may be handed to another test's peer, and a
        // poll that reaches that peer instead of a refused connection is only caught by the heartbeat.
        let heartbeat = ["--ping-interval", "4", "--ping-timeout", "6"]
        var server = try await PythonPeer.start("socketio_server.py", arguments: heartbeat)
        let port = server.port
        let policy = SocketIOReconnectPolicy(delay: .milliseconds(100), maximumDelay: .milliseconds(300))
        let client = SocketIOClient(
            url: server.url, transports: transports, configuration: .init(reconnectPolicy: policy))
        let recorder = SocketIOEventRecorder(client)
        try await client.connect()
        try await client.emit("count", "before")
        #expect(try await client.emitWithAck("stats") == [["before": 1]])

        server.killAbruptly()
        // Its listening socket is gone once it is reaped, so the restart below can bind the same port.
        await server.waitForExit()
        let sawDisconnect = try await recorder.eventually(timeout: .seconds(20)) {
            await recorder.labels.contains("disconnect transportError")
        }
        let labelsAfterKill = await recorder.labels
        #expect(sawDisconnect, "events: \(labelsAfterKill)")
        for _ in 0..<5 { try await client.emit("count", "buffered") }
        let acked = Task { try await client.emitWithAck("echo", "late", timeout: .seconds(30)) }
        #expect(try await recorder.eventually { await client.bufferedEmitCount == 6 })

        server = try await PythonPeer.start("socketio_server.py", arguments: heartbeat, port: port)
        defer { server.stop() }
        #expect(
            try await recorder.eventually(timeout: .seconds(20)) {
                await recorder.labels.filter { $0 == "connect" }.count == 2
            })
        #expect(try await acked.value == ["late"])
        #expect(try await client.emitWithAck("stats") == [["buffered": 5]])
        #expect(await recorder.labels.contains { $0.hasPrefix("reconnectAttempt") })
        await client.disconnect()
    }
}

extension PythonPeer {
    /// The peer's base URL.
    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }
}

/// Collects a client's events as labels, for assertions that wait on real network progress.
actor SocketIOEventRecorder {
    private(set) var labels: [String] = []
    private var task: Task<Void, Never>?

    init(_ client: SocketIOClient) {
        let events = client.events
        Task { await self.start(events) }
    }

    private func start(_ events: AsyncStream<SocketIOClient.Event>) {
        task = Task {
            for await event in events { self.record(event) }
        }
    }

    private func record(_ event: SocketIOClient.Event) {
        switch event {
        case .connect: labels.append("connect")
        case .disconnect(let reason):
            if case .transportError = reason {
                labels.append("disconnect transportError")
            } else {
                labels.append("disconnect \(reason)")
            }
        case .reconnectAttempt(let attempt): labels.append("reconnectAttempt \(attempt)")
        case .connectError(let error): labels.append("connectError \(error)")
        case .event(let name, let arguments, _):
            labels.append("event \(name) \(JSONValue.array(arguments).jsonString())")
        }
    }

    /// Waits for real network progress: re-checks `condition` every 10 ms until it holds or `timeout`
    /// (a guard against hanging, not a schedule) passes.
    nonisolated func eventually(
        timeout: Duration = .seconds(10), _ condition: @Sendable () async -> Bool
    ) async throws -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while clock.now < deadline {
            if await condition() { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return await condition()
    }
}
