import Foundation
import Testing

@testable import TidingsNet

/// Host-name checks that must fail closed, and the close_notify that marks an untruncated stream.
@Suite(.timeLimit(.minutes(1))) struct TLSHardeningTests {
    private func identity() throws -> TLSServerIdentity {
        let fixture = try Fixtures.serverIdentity
        return TLSServerIdentity(certificateChain: fixture.certificateChain, privateKey: fixture.privateKey)
    }

    private func trusting() throws -> TLSConfiguration {
        TLSConfiguration(additionalTrustedCertificates: [try Fixtures.serverIdentity.authority])
    }

    /// Accepts one TLS client and hands the server session to `body`; handshake failures are ignored.
    private func startServer(_ body: @escaping @Sendable (TLSConnection) async throws -> Void) throws -> (
        TCPListener, Task<Void, any Error>
    ) {
        let identity = try identity()
        let listener = try TCPListener.bind(host: "127.0.0.1", port: 0)
        let task = Task {
            let tcp = try await listener.accept()
            guard let tls = try? await TLSConnection.accept(over: tcp, identity: identity) else {
                tcp.close()
                return
            }
            try await body(tls)
        }
        return (listener, task)
    }

    @Test(arguments: ["", " ", "a b", "bad\nname", "...", ".com", ".localhost", "a..b", "localhost.", "*.localhost"])
    func anEmptyOrMalformedNameToVerifyIsAnErrorNotAFreePass(name: String) async throws {
        // OpenSSL treats an empty host as "no host check": the CA-signed certificate would pass.
        let (listener, server) = try startServer { tls in tls.close() }
        defer { listener.close() }
        let tcp = try await TCPConnection.connect(host: "127.0.0.1", port: listener.port)
        var configuration = try trusting()
        configuration.serverNameOverride = name
        await #expect {
            _ = try await TLSConnection.connect(over: tcp, host: "127.0.0.1", configuration: configuration)
        } throws: { error in
            (error as? TransportError) == .invalidHostName
        }
        server.cancel()
    }

    @Test func anEmptyHostIsAnErrorToo() async throws {
        let (listener, server) = try startServer { tls in tls.close() }
        defer { listener.close() }
        let tcp = try await TCPConnection.connect(host: "127.0.0.1", port: listener.port)
        await #expect {
            _ = try await TLSConnection.connect(over: tcp, host: "", configuration: try trusting())
        } throws: { error in
            (error as? TransportError) == .invalidHostName
        }
        server.cancel()
    }

    @Test func closeSendsCloseNotifySoThePeerSeesACleanEnd() async throws {
        let (listener, server) = try startServer { tls in
            try await tls.write(Array("ready".utf8))
            // The server waits for the client's end of stream and reports how it ended.
            while try await !tls.read().isEmpty {}
            #expect(tls.receivedCloseNotify)
            tls.close()
        }
        defer { listener.close() }
        let tcp = try await TCPConnection.connect(host: "127.0.0.1", port: listener.port)
        let tls = try await TLSConnection.connect(over: tcp, host: "127.0.0.1", configuration: try trusting())
        // Reading first also takes in the session tickets, so closing leaves nothing unread (no RST).
        #expect(try await tls.read() == Array("ready".utf8))
        tls.close()
        try await server.value
    }

    @Test func anEndWithoutCloseNotifyIsReportedAsPossibleTruncation() async throws {
        let listener = try TCPListener.bind(host: "127.0.0.1", port: 0)
        defer { listener.close() }
        let identity = try identity()
        let server = Task {
            let tcp = try await listener.accept()
            let tls = try await TLSConnection.accept(over: tcp, identity: identity)
            try await tls.write(Array("partial".utf8))
            // Drop the TCP connection under TLS: no close_notify.
            tcp.close()
        }
        let tcp = try await TCPConnection.connect(host: "127.0.0.1", port: listener.port)
        let tls = try await TLSConnection.connect(over: tcp, host: "127.0.0.1", configuration: try trusting())
        var received: [UInt8] = []
        while true {
            let chunk = try await tls.read()
            if chunk.isEmpty { break }
            received += chunk
        }
        try await server.value
        #expect(received == Array("partial".utf8))
        #expect(!tls.receivedCloseNotify)
        tls.close()
    }

    @Test func writesAreSlicedWithinTheLimitAndGoOnAfterAPartialWrite() {
        let bytes = (0..<10_000).map { UInt8(truncatingIfNeeded: $0) }
        var slices: [Int32] = []
        var received: [UInt8] = []
        let complete = TLSConnection.writeInSlices(bytes, sliceLimit: 3_000) { pointer, count in
            slices.append(count)
            // Every other call takes only half, as a partial write would.
            let taken = slices.count.isMultiple(of: 2) ? count / 2 : count
            received += UnsafeRawBufferPointer(start: pointer, count: Int(taken))
            return taken
        }
        #expect(complete)
        #expect(received == bytes)
        #expect(slices.allSatisfy { $0 <= 3_000 })
        #expect(slices.count > 4)
        // A slice limit past Int32 is clamped, never converted with a trap.
        #expect(TLSConnection.writeInSlices([1, 2, 3], sliceLimit: Int.max) { _, count in count })
        var calls = 0
        #expect(
            !TLSConnection.writeInSlices(bytes) { _, _ in
                calls += 1
                return -1
            })
        #expect(calls == 1)
    }

    @Test func aMultiMegabyteWriteGoesThroughInSlices() async throws {
        let size = 3 << 20
        let (listener, server) = try startServer { tls in
            var total = 0
            while total < size {
                let chunk = try await tls.read()
                if chunk.isEmpty { break }
                total += chunk.count
            }
            try await tls.write(Array("\(total)".utf8))
            tls.close()
        }
        defer { listener.close() }
        let tcp = try await TCPConnection.connect(host: "127.0.0.1", port: listener.port)
        let tls = try await TLSConnection.connect(over: tcp, host: "127.0.0.1", configuration: try trusting())
        try await tls.write([UInt8](repeating: 7, count: size))
        var reply: [UInt8] = []
        while true {
            let chunk = try await tls.read()
            if chunk.isEmpty { break }
            reply += chunk
        }
        #expect(String(decoding: reply, as: UTF8.self) == "\(size)")
        #expect(tls.receivedCloseNotify)
        tls.close()
        try await server.value
    }

    /// A polling response whose body runs to the end of the connection is complete only when the
    /// server ended TLS with close_notify; a bare TCP close may be an attacker cutting it short.
    @Test(arguments: [true, false])
    func aPollingBodyFramedByTheEndOfTLSNeedsCloseNotify(cleanEnd: Bool) async throws {
        let listener = try TCPListener.bind(host: "127.0.0.1", port: 0)
        defer { listener.close() }
        let identity = try identity()
        let server = Task {
            let tcp = try await listener.accept()
            let tls = try await TLSConnection.accept(over: tcp, identity: identity)
            var request: [UInt8] = []
            while !String(decoding: request, as: UTF8.self).contains("\r\n\r\n") {
                let chunk = try await tls.read()
                if chunk.isEmpty { break }
                request += chunk
            }
            try await tls.write(Array("HTTP/1.1 200 OK\r\n\r\n4{\"a\":1}".utf8))
            if cleanEnd { tls.close() } else { tcp.close() }
        }
        let pool = EngineIOHTTPConnectionPool(tls: try trusting())
        let url = URL(string: "https://127.0.0.1:\(listener.port)/socket.io/?EIO=4&transport=polling")!
        if cleanEnd {
            #expect(try await pool.get(url, headers: [:]) == Array("4{\"a\":1}".utf8))
        } else {
            await #expect {
                _ = try await pool.get(url, headers: [:])
            } throws: { error in
                (error as? EngineIOError) == .transportFailed && "\(error)".contains("close_notify")
            }
        }
        try await server.value
    }

    @Test func bothEndsRefuseRenegotiation() async throws {
        let (listener, server) = try startServer { tls in
            #expect(tls.refusesRenegotiation)
            try await tls.write(Array("ready".utf8))
            tls.close()
        }
        defer { listener.close() }
        let tcp = try await TCPConnection.connect(host: "127.0.0.1", port: listener.port)
        let tls = try await TLSConnection.connect(over: tcp, host: "127.0.0.1", configuration: try trusting())
        #expect(tls.refusesRenegotiation)
        #expect(try await tls.read() == Array("ready".utf8))
        tls.close()
        try await server.value
    }

    @Test func usableHostNamesAreRecognised() {
        #expect(isUsableHostName("chat.example.org"))
        #expect(isUsableHostName("127.0.0.1"))
        #expect(isUsableHostName("::1"))
        #expect(!isUsableHostName(""))
        #expect(!isUsableHostName(String(repeating: "a", count: 254)))
        #expect(!isUsableHostName("nul\u{0}byte"))
    }
}
