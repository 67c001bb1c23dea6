import Foundation
import Testing
import TidingsCore

@testable import TidingsNet

/// How a TLS connection's reads are done: on the reactor's thread when the transport has one, into
/// buffers sized by the ciphertext at hand, and whole whatever the split of the records on the wire.
@Suite(.timeLimit(.minutes(1))) struct TLSReadPathTests {
    private func identity() throws -> TLSServerIdentity {
        let fixture = try Fixtures.serverIdentity
        return TLSServerIdentity(certificateChain: fixture.certificateChain, privateKey: fixture.privateKey)
    }

    private func trusting() throws -> TLSConfiguration {
        TLSConfiguration(additionalTrustedCertificates: [try Fixtures.serverIdentity.authority])
    }

    /// A TLS client and server over one loopback TCP connection.
    private func tlsPair() async throws -> (listener: TCPListener, client: TLSConnection, server: TLSConnection) {
        let (listener, clientTCP, serverTCP) = try await loopbackPair()
        async let server = TLSConnection.accept(over: serverTCP, identity: try identity())
        let client = try await TLSConnection.connect(over: clientTCP, host: "127.0.0.1", configuration: try trusting())
        return (listener, client, try await server)
    }

    #if os(Linux)
        @Test func aTLSReaderResumedByReadinessRunsOnTheReactorThread() async throws {
            let (listener, client, server) = try await tlsPair()
            defer {
                client.close()
                server.close()
                listener.close()
            }
            let executor = try #require(client.reactorExecutor as ReactorExecutor?)
            let reader = Task(executorPreference: executor) { () -> [String] in
                let before = executor.isCurrentThread
                let bytes = try? await client.read()
                return [
                    "\(before)", "\(executor.isCurrentThread)",
                    bytes.map { String(decoding: $0, as: UTF8.self) } ?? "-",
                ]
            }
            try await server.write(Array("over tls".utf8))
            #expect(await reader.value == ["true", "true", "over tls"])
        }
    #endif

    @Test func aSmallRecordIsReadIntoABufferOfItsOwnSizeNotAChunk() async throws {
        let (listener, client, server) = try await tlsPair()
        defer {
            client.close()
            server.close()
            listener.close()
        }
        for round in 0..<5 {
            let message = Array("message \(round)".utf8)
            try await server.write(message)
            var received: [UInt8] = []
            while received.count < message.count {
                let chunk = try await client.read()
                try #require(!chunk.isEmpty)
                // A 64 KiB buffer per read of a few bytes is what the sizing avoids.
                #expect(chunk.capacity < TLSConnection.readChunkSize / 4)
                received += chunk
            }
            #expect(received == message)
        }
    }

    @Test(arguments: [1, 7, 300])
    func recordsCutIntoPiecesOfAnySizeArriveWholeAndInOrder(pieceSize: Int) async throws {
        let (clientEnd, serverEnd) = SplittingStream.pair()
        async let accepted = TLSConnection.accept(over: serverEnd, identity: try identity())
        let client = try await TLSConnection.connect(over: clientEnd, host: "127.0.0.1", configuration: try trusting())
        let server = try await accepted
        // Small records, then one over a record's 16 KiB, each write its own record(s).
        var expected: [UInt8] = []
        for index in 0..<40 { expected += Array("record \(index);".utf8) }
        let big = (0..<(40 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        clientEnd.pieceSize = pieceSize
        for index in 0..<40 { try await server.write(Array("record \(index);".utf8)) }
        try await server.write(big)
        expected += big
        var received: [UInt8] = []
        while received.count < expected.count {
            let chunk = try await client.read()
            try #require(!chunk.isEmpty)
            received += chunk
        }
        #expect(received == expected)
        client.close()
        server.close()
    }
}

/// One end of an in-memory byte stream whose reads return what the peer wrote cut into pieces of at most
/// `pieceSize` bytes (every byte once the size is unlimited), so TLS records reach the reader split anywhere.
private final class SplittingStream: ByteStream, @unchecked Sendable {
    private struct State {
        var buffered: [UInt8] = []
        var waiter: CheckedContinuation<[UInt8], any Error>?
        var closed = false
    }
    private let state = LockedState(State())
    private let peer = LockedState<SplittingStream?>(nil)
    private let pieceSizeState = LockedState(Int.max)
    /// The largest piece one read returns.
    var pieceSize: Int {
        get { pieceSizeState.withLock { $0 } }
        set { pieceSizeState.withLock { $0 = newValue } }
    }

    static func pair() -> (SplittingStream, SplittingStream) {
        let a = SplittingStream()
        let b = SplittingStream()
        a.peer.withLock { $0 = b }
        b.peer.withLock { $0 = a }
        return (a, b)
    }

    func read() async throws -> [UInt8] {
        let size = pieceSize
        return try await withCheckedThrowingContinuation { continuation in
            let piece = state.withLock { state -> [UInt8]? in
                if !state.buffered.isEmpty {
                    let piece = Array(state.buffered.prefix(size))
                    state.buffered.removeFirst(piece.count)
                    return piece
                }
                if state.closed { return [] }
                state.waiter = continuation
                return nil
            }
            if let piece { continuation.resume(returning: piece) }
        }
    }

    private func deliver(_ bytes: [UInt8]) {
        let size = pieceSize
        let (waiter, piece) = state.withLock { state -> (CheckedContinuation<[UInt8], any Error>?, [UInt8]) in
            state.buffered += bytes
            guard let waiter = state.waiter else { return (nil, []) }
            state.waiter = nil
            let piece = Array(state.buffered.prefix(size))
            state.buffered.removeFirst(piece.count)
            return (waiter, piece)
        }
        waiter?.resume(returning: piece)
    }

    private func end() {
        let waiter = state.withLock { state -> CheckedContinuation<[UInt8], any Error>? in
            state.closed = true
            defer { state.waiter = nil }
            return state.buffered.isEmpty ? state.waiter : nil
        }
        waiter?.resume(returning: [])
    }

    func write(_ bytes: [UInt8]) async throws {
        guard let peer = peer.withLock({ $0 }) else { throw TransportError(kind: .closed, operation: "write") }
        peer.deliver(bytes)
    }

    func close() {
        let other = peer.withLock { peer -> SplittingStream? in
            defer { peer = nil }
            return peer
        }
        other?.end()
        end()
    }
}
