import Foundation
import Testing

@testable import TidingsNet

/// The polling HTTP/1.1 client against scripted responses from a loopback listener.
@Suite(.timeLimit(.minutes(1))) struct EngineIOHTTPConnectionPoolTests {
    /// Reads one request head (and a body of `Content-Length` bytes) from `connection`.
    static func readRequest(_ connection: TCPConnection) async throws -> String {
        var bytes: [UInt8] = []
        while true {
            let text = String(decoding: bytes, as: UTF8.self)
            if let end = text.range(of: "\r\n\r\n") {
                let head = String(text[..<end.lowerBound])
                let length =
                    head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
                if text.utf8.count - text[..<end.upperBound].utf8.count >= length { return text }
            }
            let chunk = try await connection.read()
            if chunk.isEmpty { return String(decoding: bytes, as: UTF8.self) }
            bytes += chunk
        }
    }

    @Test func keepsTheConnectionAliveAndDecodesChunkedBodies() async throws {
        let listener = try TCPListener.bind()
        defer { listener.close() }
        let server = Task {
            let connection = try await listener.accept()
            var requests: [String] = []
            requests.append(try await Self.readRequest(connection))
            try await connection.write(Array("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello".utf8))
            requests.append(try await Self.readRequest(connection))
            try await connection.write(
                Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n".utf8))
            connection.close()
            return requests
        }
        let pool = EngineIOHTTPConnectionPool()
        let url = URL(string: "http://127.0.0.1:\(listener.port)/socket.io/?EIO=4&transport=polling")!
        #expect(try await pool.get(url, headers: ["Authorization": "Bearer t"]) == Array("hello".utf8))
        #expect(try await pool.post(url, body: Array("4x".utf8), headers: [:]) == Array("abcde".utf8))
        let requests = try await server.value
        #expect(requests.count == 2)
        #expect(requests[0].hasPrefix("GET /socket.io/?EIO=4&transport=polling HTTP/1.1\r\n"))
        #expect(requests[0].contains("Authorization: Bearer t\r\n"))
        #expect(requests[1].hasPrefix("POST /socket.io/?EIO=4&transport=polling HTTP/1.1\r\n"))
        #expect(requests[1].contains("Content-Length: 2\r\n"))
        #expect(requests[1].hasSuffix("\r\n\r\n4x"))
    }

    @Test func retriesOnceWhenTheServerClosedAnIdleConnection() async throws {
        let listener = try TCPListener.bind()
        defer { listener.close() }
        let server = Task {
            let first = try await listener.accept()
            _ = try await Self.readRequest(first)
            try await first.write(Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8))
            // The keep-alive connection goes stale: closed without answering the next request.
            _ = try await Self.readRequest(first)
            first.close()
            let second = try await listener.accept()
            _ = try await Self.readRequest(second)
            try await second.write(Array("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nagain".utf8))
            second.close()
        }
        let pool = EngineIOHTTPConnectionPool()
        let url = URL(string: "http://127.0.0.1:\(listener.port)/socket.io/")!
        #expect(try await pool.get(url, headers: [:]) == Array("ok".utf8))
        #expect(try await pool.get(url, headers: [:]) == Array("again".utf8))
        try await server.value
    }

    @Test func errorStatusesAndBrokenResponsesAreTypedErrors() async throws {
        let responses = [
            ("HTTP/1.1 400 Bad Request\r\nContent-Length: 13\r\n\r\nbad handshake", EngineIOError.httpStatus),
            ("SMTP ready\r\n\r\n", EngineIOError.transportFailed),
            ("HTTP/1.1 200 OK\r\nContent-Length: -4\r\n\r\n", EngineIOError.transportFailed),
            ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", EngineIOError.transportFailed),
            ("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", EngineIOError.transportFailed),
        ]
        for (response, expected) in responses {
            let listener = try TCPListener.bind()
            let server = Task {
                let connection = try await listener.accept()
                _ = try await Self.readRequest(connection)
                try await connection.write(Array(response.utf8))
                connection.close()
            }
            let pool = EngineIOHTTPConnectionPool()
            let url = URL(string: "http://127.0.0.1:\(listener.port)/socket.io/")!
            await #expect(throws: expected, "\(response.prefix(30))") { try await pool.get(url, headers: [:]) }
            try await server.value
            listener.close()
        }
    }

    @Test func headersLongerThanTheLimitFail() async throws {
        let listener = try TCPListener.bind()
        defer { listener.close() }
        let server = Task {
            let connection = try await listener.accept()
            _ = try await Self.readRequest(connection)
            let filler = String(repeating: "x", count: 70_000)
            try? await connection.write(Array("HTTP/1.1 200 OK\r\nX-Filler: \(filler)".utf8))
            _ = try? await connection.read()
            connection.close()
        }
        let pool = EngineIOHTTPConnectionPool()
        let url = URL(string: "http://127.0.0.1:\(listener.port)/socket.io/")!
        await #expect(throws: EngineIOError.transportFailed) { try await pool.get(url, headers: [:]) }
        server.cancel()
    }
}
