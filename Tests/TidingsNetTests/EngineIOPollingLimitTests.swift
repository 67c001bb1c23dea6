import Foundation
import Testing

@testable import TidingsNet

/// The polling HTTP client against servers that send hostile lengths or too many packets.
@Suite(.timeLimit(.minutes(1))) struct EngineIOPollingLimitTests {
    /// Answers the first request on one connection with `response`, then closes.
    static func serve(_ response: String, on listener: TCPListener) -> Task<Void, any Error> {
        Task {
            let connection = try await listener.accept()
            _ = try await EngineIOHTTPConnectionPoolTests.readRequest(connection)
            try? await connection.write(Array(response.utf8))
            connection.close()
        }
    }

    @Test func aChunkSizeNearIntMaxIsATypedErrorNotATrap() async throws {
        let listener = try TCPListener.bind()
        defer { listener.close() }
        // One 1-byte chunk, then a size that overflows `body.count + size`.
        let server = Self.serve(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nA\r\n7fffffffffffffff\r\n", on: listener)
        let pool = EngineIOHTTPConnectionPool()
        let url = URL(string: "http://127.0.0.1:\(listener.port)/socket.io/")!
        await #expect(throws: EngineIOError.transportFailed) { try await pool.get(url, headers: [:]) }
        try await server.value
    }

    @Test func chunkSizesLongerThanAnIntAreRefused() async throws {
        let listener = try TCPListener.bind()
        defer { listener.close() }
        let server = Self.serve(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1ffffffffffffffff\r\nA\r\n", on: listener)
        let pool = EngineIOHTTPConnectionPool()
        let url = URL(string: "http://127.0.0.1:\(listener.port)/socket.io/")!
        await #expect(throws: EngineIOError.transportFailed) { try await pool.get(url, headers: [:]) }
        try await server.value
    }
}
