import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsNet

/// Tidings' Socket.IO client with `version: .v3` against python-socketio 4.6 / python-engineio 3.14
/// (Socket.IO protocol 4 over Engine.IO 3, what socket.io 2.x servers speak), `Tests/Peers/sio2_server.py`
/// run by `.venv-eio3/`. One shared peer: no test changes server-wide state.
@Suite(.timeLimit(.minutes(2))) struct SocketIOEngineIO3InteropTests {
    static let allTransports: [EngineIOClient.Transports] = [.polling, .pollingThenWebSocket, .webSocket]

    static func peer() async throws -> PythonPeer {
        try await PythonPeer.shared("sio2_server.py", python: PythonPeer.pythonEIO3)
    }

    @Test(arguments: allTransports)
    func connectEmitWithAckAndServerEmitsOverEveryTransport(_ transports: EngineIOClient.Transports) async throws {
        let server = try await Self.peer()
        let client = SocketIOClient(
            url: server.url, transports: transports, headers: ["Authorization": "ana"], version: .v3)
        let recorder = SocketIOEventRecorder(client)
        try await client.connect()
        // The server's connect handler saw the handshake's header and emitted to the new socket.
        #expect(try await recorder.eventually { await recorder.labels.contains(#"event welcome ["ana"]"#) })
        #expect(try await client.emitWithAck("auth", timeout: .seconds(10)) == ["ana"])
        let arguments: [JSONValue] = [1, "two", ["three": [3.5, nil, true]], "é🎉"]
        #expect(try await client.emitWithAck("echo", arguments: arguments, timeout: .seconds(10)) == arguments)
        if transports == .pollingThenWebSocket {
            #expect(try await recorder.eventually { await client.activeTransport == .webSocket })
        } else {
            #expect(await client.activeTransport == (transports == .polling ? .polling : .webSocket))
        }
        #expect(try await client.emitWithAck("push", 5, timeout: .seconds(10)) == [5])
        #expect(
            try await recorder.eventually { await recorder.labels.filter { $0.hasPrefix("event tick") }.count == 5 })
        #expect(
            await recorder.labels.filter { $0.hasPrefix("event tick") } == (0..<5).map { "event tick [\($0)]" })
        await client.disconnect()
        #expect(await client.isConnected == false)
    }

    @Test(arguments: allTransports)
    func binaryAttachmentsTravelBothWays(_ transports: EngineIOClient.Transports) async throws {
        let server = try await Self.peer()
        let client = SocketIOClient(url: server.url, transports: transports, version: .v3)
        try await client.connect()
        let small: [UInt8] = [0, 1, 2, 255]
        #expect(
            try await client.emitWithAck("binary", .binary(small), timeout: .seconds(10))
                == [4, .binary(small.reversed())])
        let large = (0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let reply = try await client.emitWithAck(
            "echo", arguments: [.binary(large), ["nested": .binary([9])], "text"], timeout: .seconds(10))
        #expect(reply == [.binary(large), ["nested": .binary([9])], "text"])
        await client.disconnect()
    }

    @Test(arguments: allTransports)
    func aNamespaceIsConnectedBesideTheDefaultOne(_ transports: EngineIOClient.Transports) async throws {
        let server = try await Self.peer()
        let admin = SocketIOClient(url: server.url, transports: transports, version: .v3)
        try await admin.connect(namespace: "/admin")
        let whoami = try await admin.emitWithAck("whoami", timeout: .seconds(10))
        #expect(whoami.first?["namespace"] == "/admin")
        await admin.disconnect()
    }

    @Test(arguments: allTransports)
    func aRefusedDefaultNamespaceFailsTheHandshakeWithItsStatus(_ transports: EngineIOClient.Transports) async throws {
        let server = try await Self.peer()
        let client = SocketIOClient(
            url: server.url, transports: transports, headers: ["Authorization": "reject"], version: .v3)
        // socket.io 2.x refuses "/" in the Engine.IO handshake itself (HTTP 401), before any Socket.IO
        // packet: the client reports the handshake's status as a typed error and is not connected.
        do {
            try await client.connect()
            Issue.record("the server should refuse")
        } catch let error as EngineIOError {
            #expect(error == (transports == .webSocket ? .transportFailed : .httpStatus))
            #expect(error.detail.contains("401"))
        }
        #expect(await client.isConnected == false)
    }

    @Test(arguments: allTransports)
    func serverInitiatedDisconnectIsReportedAndNotRetried(_ transports: EngineIOClient.Transports) async throws {
        let server = try await Self.peer()
        let client = SocketIOClient(url: server.url, transports: transports, version: .v3)
        let recorder = SocketIOEventRecorder(client)
        try await client.connect()
        try await client.emit("disconnect_me")
        #expect(try await recorder.eventually { await recorder.labels.contains("disconnect serverDisconnect") })
        #expect(await client.isConnected == false)
        #expect(await recorder.labels.filter { $0.hasPrefix("reconnectAttempt") }.isEmpty)
    }
}
