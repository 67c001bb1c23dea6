import Foundation
import Testing
import TidingsCore

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

/// A polling POST is repeated only when it certainly did not reach the server.
@Suite(.timeLimit(.minutes(1))) struct EngineIOPollingRetryTests {
    /// Counts requests; the first connection answers one POST then drops the next one unanswered,
    /// every later connection answers `dup` (which only a retried POST would ever see).
    final class DroppingServer: Sendable {
        let listener: TCPListener
        let requests = LockedState<[String]>([])
        let task: Task<Void, Never>

        init() throws {
            let listener = try TCPListener.bind()
            self.listener = listener
            let requests = self.requests
            task = Task {
                guard let first = try? await listener.accept() else { return }
                if let request = try? await EngineIOHTTPConnectionPoolTests.readRequest(first) {
                    requests.withLock { $0.append(request) }
                    try? await first.write(Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8))
                }
                if let request = try? await EngineIOHTTPConnectionPoolTests.readRequest(first) {
                    requests.withLock { $0.append(request) }
                }
                first.close()
                while let next = try? await listener.accept() {
                    if let request = try? await EngineIOHTTPConnectionPoolTests.readRequest(next) {
                        requests.withLock { $0.append(request) }
                        try? await next.write(
                            Array("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\ndup".utf8))
                    }
                    next.close()
                }
            }
        }

        func stop() {
            task.cancel()
            listener.close()
        }
    }

    @Test func aPostLostAfterItWasSentIsNotRetried() async throws {
        let server = try DroppingServer()
        defer { server.stop() }
        let pool = EngineIOHTTPConnectionPool()
        let url = URL(string: "http://127.0.0.1:\(server.listener.port)/socket.io/")!
        #expect(try await pool.post(url, body: Array("4a".utf8), headers: [:]) == Array("ok".utf8))
        await #expect(throws: EngineIOError.transportFailed) {
            _ = try await pool.post(url, body: Array("4b".utf8), headers: [:])
        }
        #expect(server.requests.withLock { $0.filter { $0.hasSuffix("4b") }.count } == 1)
    }

    @Test func aGetLostOnAReusedConnectionIsRetried() async throws {
        let server = try DroppingServer()
        defer { server.stop() }
        let pool = EngineIOHTTPConnectionPool()
        let url = URL(string: "http://127.0.0.1:\(server.listener.port)/socket.io/")!
        #expect(try await pool.get(url, headers: [:]) == Array("ok".utf8))
        #expect(try await pool.get(url, headers: [:]) == Array("dup".utf8))
    }

    @Test func anIdleConnectionTheServerClosedIsNotUsedForAPost() async throws {
        let listener = try TCPListener.bind()
        defer { listener.close() }
        let closed = AsyncStream.makeStream(of: Void.self)
        let server = Task {
            let first = try await listener.accept()
            _ = try await EngineIOHTTPConnectionPoolTests.readRequest(first)
            try await first.write(Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8))
            first.close()
            closed.continuation.yield()
            let second = try await listener.accept()
            let request = try await EngineIOHTTPConnectionPoolTests.readRequest(second)
            try await second.write(Array("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nfresh".utf8))
            second.close()
            return request
        }
        let pool = EngineIOHTTPConnectionPool()
        let url = URL(string: "http://127.0.0.1:\(listener.port)/socket.io/")!
        #expect(try await pool.post(url, body: Array("4a".utf8), headers: [:]) == Array("ok".utf8))
        var signals = closed.stream.makeAsyncIterator()
        _ = await signals.next()
        // The server's FIN is on its way over loopback; the pool must notice it before sending.
        var idleLooksClosed = false
        while !idleLooksClosed {
            idleLooksClosed = pool.idleConnectionsLookClosed(for: url)
            try Task.checkCancellation()
            await Task.yield()
        }
        #expect(try await pool.post(url, body: Array("4b".utf8), headers: [:]) == Array("fresh".utf8))
        #expect(try await server.value.hasSuffix("4b"))
    }
}
