import Foundation
import Testing
import TidingsCore

@testable import TidingsNet

/// `TLSConnection` owns the stream it is given from the first call: a failure before or during the
/// handshake closes it, so a caller never leaks a socket on an error path.
@Suite(.timeLimit(.minutes(1))) struct TLSTransportOwnershipTests {
    /// A stream whose peer is gone: reads see the end at once, writes are swallowed, closes are counted.
    final class EndedStream: ByteStream {
        private let closes = LockedState(0)
        var closeCount: Int { closes.withLock { $0 } }
        func read() async throws -> [UInt8] { [] }
        func write(_ bytes: [UInt8]) async throws {}
        func close() { closes.withLock { $0 += 1 } }
    }

    @Test func aNameThatCannotBeVerifiedClosesTheTransport() async throws {
        let transport = EndedStream()
        await #expect(throws: TransportError.invalidHostName) {
            _ = try await TLSConnection.connect(over: transport, host: "")
        }
        #expect(transport.closeCount == 1)
    }

    @Test func aClientHandshakeThatFailsClosesTheTransport() async throws {
        let transport = EndedStream()
        await #expect(throws: TransportError.tlsHandshakeFailed) {
            _ = try await TLSConnection.connect(over: transport, host: "example.test")
        }
        #expect(transport.closeCount == 1)
    }

    @Test func aServerIdentityThatCannotBeLoadedClosesTheTransport() async throws {
        let transport = EndedStream()
        let identity = TLSServerIdentity(certificateChain: "not a certificate", privateKey: "not a key")
        await #expect(throws: TransportError.tlsHandshakeFailed) {
            _ = try await TLSConnection.accept(over: transport, identity: identity)
        }
        #expect(transport.closeCount == 1)
    }

    @Test func aServerHandshakeThatFailsClosesTheTransport() async throws {
        let fixture = try Fixtures.serverIdentity
        let identity = TLSServerIdentity(certificateChain: fixture.certificateChain, privateKey: fixture.privateKey)
        let transport = EndedStream()
        await #expect(throws: TransportError.tlsHandshakeFailed) {
            _ = try await TLSConnection.accept(over: transport, identity: identity)
        }
        #expect(transport.closeCount == 1)
    }
}
