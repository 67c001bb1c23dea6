import Foundation
import PeerSupport
import Testing
import TidingsNet

/// Our WebSocket client against the `websockets` library's server (Tests/Peers/ws_peer.py).
@Suite(.timeLimit(.minutes(2))) struct WebSocketInteropTests {
    static let tlsFolder = PythonPeer.projectRoot.appendingPathComponent("Tests/Fixtures/tls")

    /// The suite's shared peer (the server keeps no state between connections), or with `own` a peer
    /// for this test alone (one the test kills).
    private func startPeer(tls: Bool, own: Bool = false) async throws -> PythonPeer {
        let arguments =
            tls
            ? [
                "--tls-cert", Self.tlsFolder.appendingPathComponent("server.pem").path,
                "--tls-key", Self.tlsFolder.appendingPathComponent("server.key").path,
            ] : []
        return own
            ? try await PythonPeer.start("ws_peer.py", arguments: arguments)
            : try await PythonPeer.shared("ws_peer.py", arguments: arguments)
    }

    private func configuration(trustingTestCA: Bool = true) throws -> WebSocket.Configuration {
        var configuration = WebSocket.Configuration(connectTimeout: .seconds(20), pingInterval: nil)
        if trustingTestCA {
            let authority = try String(contentsOf: Self.tlsFolder.appendingPathComponent("ca.pem"), encoding: .utf8)
            configuration.tls.additionalTrustedCertificates = [authority]
        }
        return configuration
    }

    private func url(_ peer: PythonPeer, _ path: String, tls: Bool = false, host: String = "127.0.0.1") -> URL {
        URL(string: "\(tls ? "wss" : "ws")://\(host):\(peer.port)\(path)")!
    }

    @Test(arguments: [false, true])
    func echoesEveryLengthBoundaryAsTextAndBinary(tls: Bool) async throws {
        let peer = try await startPeer(tls: tls)
        let socket = try await WebSocket.connect(to: url(peer, "/echo", tls: tls), configuration: configuration())
        var messages = socket.messages.makeAsyncIterator()
        for length in [0, 125, 126, 65_535, 65_536, 1 << 20] {
            let binary = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 17 &+ length) }
            try await socket.send(binary: binary)
            #expect(try await messages.next() == .binary(binary), "binary \(length) B")
            // Multi-byte characters included, so UTF-8 crosses frame and read boundaries.
            let text = Self.text(utf8Length: length)
            try await socket.send(text: text)
            #expect(try await messages.next() == .text(text), "text \(text.utf8.count) B")
        }
        await socket.close()
        #expect(try await messages.next() == nil)
    }

    /// A text of exactly `utf8Length` bytes mixing 1- to 4-byte characters.
    static func text(utf8Length: Int) -> String {
        var text = ""
        var count = 0
        let pattern: [Character] = ["a", "é", "€", "😀"]
        var index = 0
        while true {
            let next = pattern[index % pattern.count]
            index += 1
            let size = String(next).utf8.count
            if count + size > utf8Length { break }
            text.append(next)
            count += size
        }
        return text + String(repeating: "a", count: utf8Length - count)
    }

    @Test func aCertificateFromAnUntrustedAuthorityFailsVerification() async throws {
        let peer = try await startPeer(tls: true)
        do {
            _ = try await WebSocket.connect(
                to: url(peer, "/echo", tls: true), configuration: configuration(trustingTestCA: false))
            Issue.record("an untrusted certificate must not connect")
        } catch let error as WebSocketError {
            #expect(error.underlying == .certificateUntrusted)
        }
    }

    @Test func aCertificateForAnotherHostNameFails() async throws {
        let peer = try await startPeer(tls: true)
        var configuration = try configuration()
        configuration.tls.serverNameOverride = "chat.example.org"
        do {
            _ = try await WebSocket.connect(to: url(peer, "/echo", tls: true), configuration: configuration)
            Issue.record("a certificate for another name must not connect")
        } catch let error as WebSocketError {
            #expect(error.underlying == .hostnameMismatch)
        }
        // The same certificate names "localhost", which therefore verifies.
        let socket = try await WebSocket.connect(
            to: url(peer, "/echo", tls: true, host: "localhost"), configuration: try self.configuration())
        await socket.close()
    }

    @Test func theServersPingIsAnswered() async throws {
        let peer = try await startPeer(tls: false)
        let socket = try await WebSocket.connect(to: url(peer, "/ping"), configuration: configuration())
        var messages = socket.messages.makeAsyncIterator()
        #expect(try await messages.next() == .text("pong received"))
        await socket.close()
    }

    @Test(arguments: [false, true])
    func aServerInitiatedCloseEndsTheStreamWithItsCode(tls: Bool) async throws {
        let peer = try await startPeer(tls: tls)
        let socket = try await WebSocket.connect(to: url(peer, "/close/4001", tls: tls), configuration: configuration())
        var received: [WebSocketMessage] = []
        for try await message in socket.messages { received.append(message) }
        #expect(received == [.text("closing")])
        #expect(socket.closeStatus?.code == WebSocketCloseCode(rawValue: 4001))
        #expect(socket.closeStatus?.reason == "server says bye")
    }

    @Test func fragmentedMessagesFromTheServerAreReassembled() async throws {
        let peer = try await startPeer(tls: false)
        let socket = try await WebSocket.connect(to: url(peer, "/fragments"), configuration: configuration())
        var messages = socket.messages.makeAsyncIterator()
        #expect(try await messages.next() == .text("fragmented ✓"))
        #expect(try await messages.next() == .binary([0, 1, 2, 255]))
        await socket.close()
    }

    @Test func headersAndSubprotocolReachTheServer() async throws {
        let peer = try await startPeer(tls: false)
        var configuration = try configuration()
        configuration.headers = [
            ("Authorization", "Bearer t0ken"), ("Origin", "https://app.example"), ("Cookie", "sid=1"),
        ]
        configuration.subprotocols = ["chat.v1"]
        let socket = try await WebSocket.connect(to: url(peer, "/headers"), configuration: configuration)
        var messages = socket.messages.makeAsyncIterator()
        guard case .text(let json) = try await messages.next() else {
            Issue.record("expected the header report")
            return
        }
        let report = try JSONDecoder().decode([String: String?].self, from: Data(json.utf8))
        #expect(report["authorization"] == "Bearer t0ken")
        #expect(report["origin"] == "https://app.example")
        #expect(report["cookie"] == "sid=1")
        #expect(report["subprotocol"] == "chat.v1")
        #expect(socket.subprotocol == "chat.v1")
        await socket.close()
    }

    @Test(arguments: [false, true])
    func aServerKilledMidConnectionEndsTheStreamWithAnError(tls: Bool) async throws {
        let peer = try await startPeer(tls: tls, own: true)
        defer { peer.stop() }
        let socket = try await WebSocket.connect(to: url(peer, "/echo", tls: tls), configuration: configuration())
        var messages = socket.messages.makeAsyncIterator()
        try await socket.send(text: "one")
        #expect(try await messages.next() == .text("one"))
        peer.killAbruptly()
        await #expect {
            _ = try await messages.next()
        } throws: { error in
            (error as? WebSocketError) == .connectionLost
        }
    }
}

extension WebSocketInteropTests {
    /// Thousands of small messages in flight, then mebibyte messages on the same connection: both
    /// directions wait for socket readiness at once, which once lost a wake-up. The dense echo stream
    /// is what read coalescing batches (Linux), so the tail of each burst, below the low-water mark,
    /// must still arrive, with coalescing on and off, over TCP and TLS.
    @Test(arguments: [(false, true), (true, true), (false, false)])
    func pipelinedMessagesThenLargeOnesKeepFlowing(tls: Bool, coalescesDenseReads: Bool) async throws {
        let peer = try await startPeer(tls: tls)
        var configuration = try configuration()
        configuration.coalescesDenseReads = coalescesDenseReads
        let socket = try await WebSocket.connect(to: url(peer, "/echo", tls: tls), configuration: configuration)
        var messages = socket.messages.makeAsyncIterator()
        let count = 5000
        for burst in 0..<3 {
            let sender = Task {
                for index in 0..<count { try await socket.send(text: "pipe \(burst) \(index)") }
            }
            for index in 0..<count { #expect(try await messages.next() == .text("pipe \(burst) \(index)")) }
            try await sender.value
            // One message at a time after the burst: each must come back although no more follow it.
            for index in 0..<20 {
                try await socket.send(text: "single \(index)")
                #expect(try await messages.next() == .text("single \(index)"))
            }
        }
        let blob = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        for _ in 0..<3 {
            try await socket.send(binary: blob)
            #expect(try await messages.next() == .binary(blob))
        }
        await socket.close()
    }
}
