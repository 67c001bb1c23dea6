import Foundation
import Testing

@testable import TidingsNet

@Suite(.timeLimit(.minutes(1))) struct TLSConnectionTests {
    /// Runs a TLS server for one connection that echoes until end of stream.
    private func startEchoServer() throws -> (TCPListener, Task<Void, any Error>) {
        let fixture = try Fixtures.serverIdentity
        let identity = TLSServerIdentity(certificateChain: fixture.certificateChain, privateKey: fixture.privateKey)
        let listener = try TCPListener.bind(port: 0)
        let task = Task {
            let tcp = try await listener.accept()
            let tls = try await TLSConnection.accept(over: tcp, identity: identity)
            while true {
                let bytes = try await tls.read()
                if bytes.isEmpty { break }
                try await tls.write(bytes)
            }
            tls.close()
        }
        return (listener, task)
    }

    private func trusting() throws -> TLSConfiguration {
        TLSConfiguration(additionalTrustedCertificates: [try Fixtures.serverIdentity.authority])
    }

    @Test(arguments: ["127.0.0.1", "localhost"])
    func aTrustedServerEchoesAMebibyte(host: String) async throws {
        let (listener, server) = try startEchoServer()
        let tcp = try await TCPConnection.connect(host: host, port: listener.port)
        let tls = try await TLSConnection.connect(over: tcp, host: host, configuration: try trusting())
        let payload = (0..<(1024 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        async let written: Void = tls.write(payload)
        var received: [UInt8] = []
        while received.count < payload.count {
            let chunk = try await tls.read()
            if chunk.isEmpty { break }
            received += chunk
        }
        try await written
        #expect(received == payload)
        tls.close()
        try await server.value
        listener.close()
    }

    @Test func aCertificateFromAnUnknownAuthorityIsRefused() async throws {
        let (listener, server) = try startEchoServer()
        let tcp = try await TCPConnection.connect(host: "127.0.0.1", port: listener.port)
        await #expect {
            _ = try await TLSConnection.connect(over: tcp, host: "127.0.0.1", configuration: TLSConfiguration())
        } throws: { error in
            (error as? TransportError) == .certificateUntrusted
        }
        _ = try? await server.value
        listener.close()
    }

    @Test func aCertificateForAnotherHostIsRefused() async throws {
        let (listener, server) = try startEchoServer()
        let tcp = try await TCPConnection.connect(host: "127.0.0.1", port: listener.port)
        var configuration = try trusting()
        configuration.serverNameOverride = "chat.example.org"
        await #expect {
            _ = try await TLSConnection.connect(over: tcp, host: "127.0.0.1", configuration: configuration)
        } throws: { error in
            (error as? TransportError) == .hostnameMismatch
        }
        _ = try? await server.value
        listener.close()
    }

    @Test func aTrustEntryWithoutACertificateIsAClearError() async throws {
        let (listener, tcp, peer) = try await loopbackPair()
        await #expect {
            _ = try await TLSConnection.connect(
                over: tcp, host: "127.0.0.1",
                configuration: TLSConfiguration(additionalTrustedCertificates: ["not a certificate"]))
        } throws: { error in
            (error as? TransportError) == .tlsHandshakeFailed
        }
        peer.close()
        listener.close()
    }

    @Test func aServerThatSpeaksPlainTextFailsTheHandshake() async throws {
        let (listener, tcp, peer) = try await loopbackPair()
        try await peer.write(Array("HTTP/1.1 400 Bad Request\r\n\r\n".utf8))
        await #expect {
            _ = try await TLSConnection.connect(over: tcp, host: "127.0.0.1", configuration: try trusting())
        } throws: { error in
            // The reason comes from OpenSSL's error queue, read on the thread that made the failing call.
            guard let error = error as? TransportError, error == .tlsHandshakeFailed else { return false }
            let detail = error.detail ?? ""
            return !detail.contains("unknown TLS error") && detail.lowercased().contains("wrong version")
        }
        peer.close()
        listener.close()
    }
}
