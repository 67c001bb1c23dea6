import Foundation
import Testing
import TidingsCore
import TidingsNet
import TidingsSandboxKit

/// The same HTTP server behind real loopback sockets, driven by our own ``HTTPClient``.
@Suite(.timeLimit(.minutes(1))) struct SandboxHTTPLoopbackTests {
    private func url(_ listener: SandboxHTTPListener, _ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(listener.port)\(path)")!
    }

    @Test func jsonFormMultipartAndCookiesRoundTripThroughHTTPClient() async throws {
        let server = SandboxHTTPServer(router: SandboxTestRoutes.router())
        let listener = try server.serve()
        defer { listener.stop() }
        let client = HTTPClient()

        let status = try await client.decode(
            [String: String].self, from: HTTPRequest(url: url(listener, "/api/v1/statuses/9?q=x")))
        #expect(status == ["id": "9", "q": "x"])

        let echo = try await client.send(
            try .json(.post, url: url(listener, "/api/v1/echo"), body: SandboxTestRoutes.Echo(text: "é", count: 1)))
        #expect(echo.status == 201)
        #expect(try JSONDecoder().decode(SandboxTestRoutes.Echo.self, from: echo.body) == .init(text: "é", count: 1))

        let form = try await client.send(.form(url: url(listener, "/form"), fields: [("a", "1 2"), ("b", "&")]))
        #expect(try JSONDecoder().decode([String: String].self, from: form.body) == ["a": "1 2", "b": "&"])

        var multipart = MultipartFormData()
        multipart.addFile(name: "media", filename: "m.bin", data: Data(repeating: 1, count: 70_000))
        let upload = try await client.send(.multipart(url: url(listener, "/upload"), form: multipart))
        #expect(try JSONDecoder().decode([String].self, from: upload.body) == ["media|m.bin|70000"])

        #expect(try await client.response(for: HTTPRequest(url: url(listener, "/me"))).status == 401)
        _ = try await client.send(.form(url: url(listener, "/login"), fields: [("user", "ann")]))
        let me = try await client.decode([String: String].self, from: HTTPRequest(url: url(listener, "/me")))
        #expect(me == ["session": "s-ann"])
    }

    @Test func linksRateLimitsAndChunkedBodiesAsTheClientReadsThem() async throws {
        let server = SandboxHTTPServer(router: SandboxTestRoutes.router())
        let listener = try server.serve()
        defer { listener.stop() }
        let client = HTTPClient()
        let timeline = try await client.send(HTTPRequest(url: url(listener, "/timeline")))
        #expect(timeline.links["next"] == url(listener, "/timeline?max_id=1"))
        #expect(timeline.rateLimitSignal.remaining == "299")
        let stream = try await client.send(HTTPRequest(url: url(listener, "/stream")))
        #expect(String(decoding: stream.body, as: UTF8.self) == "first,second,third")
        #expect(stream.headers["Transfer-Encoding"] == nil || stream.headers["Transfer-Encoding"] == "chunked")
        let entries = server.log.entries
        #expect(entries.map(\.path) == ["/timeline", "/stream"])
        // Wire bytes: the head counts too, so more than the body went out.
        #expect(entries[1].bytesOut > "first,second,third".utf8.count)
        #expect(entries[0].bytesIn > 0)
    }

    @Test func faultsReachTheClientAsTheNetworkWouldShowThem() async throws {
        let server = SandboxHTTPServer(router: SandboxTestRoutes.router())
        let listener = try server.serve()
        defer { listener.stop() }
        let client = HTTPClient(configuration: .init(timeout: .seconds(20)))

        server.faults.add(.tooManyRequests(retryAfterSeconds: 120), on: .path("/big"), times: 1)
        let limited = try await client.response(for: HTTPRequest(url: url(listener, "/big")))
        #expect(limited.status == 429)
        #expect(limited.retryAfter(now: Date()) == .seconds(120))

        server.faults.add(.dropMidResponse, on: .path("/big"), times: 1)
        await #expect(throws: (any Error).self) {
            _ = try await client.response(for: HTTPRequest(url: url(listener, "/big")))
        }
        server.faults.add(.close(code: 0), on: .path("/big"), times: 1)
        await #expect(throws: (any Error).self) {
            _ = try await client.response(for: HTTPRequest(url: url(listener, "/big")))
        }
        server.faults.add(.malformedBody, on: .path("/api/"), times: 1)
        await #expect(throws: (any Error).self) {
            _ = try await client.decode(
                [String: String].self, from: HTTPRequest(url: url(listener, "/api/v1/statuses/1")))
        }
        // After the faults are spent the same route answers again.
        #expect(try await client.response(for: HTTPRequest(url: url(listener, "/big"))).body.count == 10_000)
        let statuses = server.log.entries.map(\.status)
        #expect(statuses.first == 429)
        #expect(statuses.last == 200)
        #expect(server.log.entries.compactMap(\.fault).contains("drop mid-response"))
    }

    @Test func neverAnswerHoldsTheConnectionUntilTheClientsDeadline() async throws {
        let server = SandboxHTTPServer(router: SandboxTestRoutes.router())
        let listener = try server.serve()
        defer { listener.stop() }
        server.faults.add(.neverAnswer, on: .path("/big"), times: 1)
        var request = HTTPRequest(url: url(listener, "/big"))
        request.timeout = .seconds(1)
        await #expect(throws: (any Error).self) { _ = try await HTTPClient().response(for: request) }
        #expect(server.log.entries.isEmpty)
    }

    @Test func malformedRequestsGetATypedStatusNotACrash() async throws {
        let server = SandboxHTTPServer(router: SandboxTestRoutes.router())
        let listener = try server.serve()
        defer { listener.stop() }
        for (raw, status) in [
            ("NOT A REQUEST\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n", 400),
            ("POST /form HTTP/1.1\r\nContent-Length: 999999999\r\n\r\n", 413),
            ("POST /form HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 411),
            ("GET / HTTP/1.1\r\nBad Header\r\n\r\n", 400),
        ] {
            let connection = try await TCPConnection.connect(host: "127.0.0.1", port: listener.port)
            defer { connection.close() }
            try await connection.write(Array(raw.utf8))
            var reply: [UInt8] = []
            while true {
                let chunk = try await connection.read()
                if chunk.isEmpty { break }
                reply += chunk
            }
            #expect(String(decoding: reply, as: UTF8.self).hasPrefix("HTTP/1.1 \(status) "), "\(raw)")
        }
    }
}
