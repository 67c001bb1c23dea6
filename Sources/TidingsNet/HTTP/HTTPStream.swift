import Foundation
import TidingsCore

/// One HTTP/1.1 connection with the bytes read past the last response, shared by the Engine.IO polling
/// pool and ``HTTPClient``'s transport.
final class HTTPStream: @unchecked Sendable {
    /// The connection ended before a response byte arrived: the server closed an idle connection.
    struct StaleConnection: Error {
        let reason: String
    }

    typealias Response = HTTPResponseParser.Response

    let connection: any ByteStream
    // Only one request runs on a stream at a time (it is out of the pool while in use).
    private var leftover: [UInt8] = []

    /// Bytes received past the last response (none on a healthy idle connection).
    var available: Int { leftover.count }

    init(_ connection: any ByteStream) {
        self.connection = connection
    }

    /// Whether the idle connection was closed by the server (or got unexpected bytes); only plain
    /// TCP can be checked without a read, so a TLS connection always looks usable.
    var isUnusableWhileIdle: Bool {
        available > 0 || (connection as? TCPConnection)?.isUnusableWhileIdle() == true
    }

    /// Sends `request` and reads one response.
    func exchange(_ request: [UInt8], maximumBodySize: Int) async throws -> Response {
        try await send(request)
        // The parsing lives in HTTPResponseParser, a pure function of the bytes, so it can be fuzzed.
        var parser = HTTPResponseParser(maximumBodySize: maximumBodySize)
        return try await receive(&parser)
    }

    /// Writes `request`; a failure is reported as a stale connection (nothing of it was answered).
    func send(_ request: [UInt8]) async throws {
        do {
            try await connection.write(request)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw StaleConnection(reason: "write failed: \(error)")
        }
    }

    /// Reads one response into `parser`, starting with the bytes left over from the last one; the parser
    /// keeps the header fields and byte counts, also when this throws.
    ///
    /// - Throws: ``StaleConnection`` when the connection ended before any byte of the response,
    ///   ``EngineIOError`` for a malformed, oversized or truncated one, ``TransportError``,
    ///   `CancellationError`.
    func receive(_ parser: inout HTTPResponseParser) async throws -> Response {
        parser.append(leftover)
        leftover = []
        while true {
            if let response = try parser.next() {
                leftover = Array(parser.leftover)
                return response
            }
            let chunk: [UInt8]
            do {
                chunk = try await connection.read()
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                if !parser.hasReceivedBytes { throw StaleConnection(reason: "read failed: \(error)") }
                throw error
            }
            guard !chunk.isEmpty else {
                if !parser.hasReceivedBytes { throw StaleConnection(reason: "the server closed the connection") }
                return try parser.finish(cleanEnd: Self.endedCleanly(connection))
            }
            parser.append(chunk)
        }
    }

    /// A TLS stream that ended without `close_notify` may have been truncated by an attacker.
    private static func endedCleanly(_ connection: any ByteStream) -> Bool {
        #if TIDINGS_OPENSSL
            if let tls = connection as? TLSConnection { return tls.receivedCloseNotify }
        #endif
        return true
    }
}
