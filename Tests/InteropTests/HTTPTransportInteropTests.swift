import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsNet

/// ``HTTPClient``'s own HTTP/1.1 transport (Linux) against aiohttp (Tests/Peers/http_transport_peer.py):
/// keep-alive reuse, a kept-alive connection the server drops, chunked bodies, the size limit while a body
/// streams in, a server that never answers (deadline on the virtual clock, cancellation), redirect rules.
///
/// The peer reports which client port each request came from, so reuse is seen from the server's side.
@Suite(.timeLimit(.minutes(2))) struct HTTPTransportInteropTests {
    private func url(_ peer: PythonPeer, _ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(peer.port)\(path)")!
    }

    /// What `/echo` reports.
    private struct Echo: Decodable {
        var method: String
        var body_length: Int
        var content_type: String?
        var connection: Int
        var headers: [[String]]

        func header(_ name: String) -> [String] {
            headers.filter { $0.first?.lowercased() == name.lowercased() }.compactMap { $0.last }
        }
    }

    private struct Count: Decodable { var count: Int }
    private struct Held: Decodable {
        var arrived: Bool
        var closed: Bool
    }
    private struct Mark: Decodable { var connection: Int }

    private func echo(_ client: HTTPClient, _ peer: PythonPeer, _ request: HTTPRequest? = nil) async throws -> Echo {
        try await client.decode(Echo.self, from: request ?? HTTPRequest(url: url(peer, "/echo")))
    }

    @Test func sequentialRequestsReuseOneConnection() async throws {
        let peer = try await PythonPeer.shared("http_transport_peer.py")
        let client = HTTPClient()
        let first = try await echo(client, peer)
        let second = try await echo(client, peer)
        let third = try await echo(
            client, peer, HTTPRequest(method: .post, url: url(peer, "/echo"), body: Data("x".utf8)))
        #expect(first.connection == second.connection)
        #expect(second.connection == third.connection)
        // Two clients never share connections (nor cookies).
        #expect(try await echo(HTTPClient(), peer).connection != first.connection)
    }

    @Test func theRequestHeadIsWhatTheTransportDecides() async throws {
        let peer = try await PythonPeer.shared("http_transport_peer.py")
        let client = HTTPClient()
        var request = HTTPRequest(url: url(peer, "/echo?q=1"))
        request.headers["Connection"] = "close"
        request.headers["Host"] = "evil.example"
        request.headers["X-Mine"] = "yes"
        let seen = try await echo(client, peer, request)
        #expect(seen.header("Host") == ["127.0.0.1:\(peer.port)"])
        #expect(seen.header("Accept-Encoding").isEmpty)
        #expect(seen.header("Connection").isEmpty)
        #expect(seen.header("X-Mine") == ["yes"])
        #expect(seen.header("User-Agent") == ["Tidings"])
        #expect(seen.header("Accept") == ["*/*"])
    }

    @Test func aGETOnAConnectionTheServerDroppedIsRetriedOnceOnANewOne() async throws {
        let peer = try await PythonPeer.shared("http_transport_peer.py")
        let client = HTTPClient()
        let marked = try await client.decode(Mark.self, from: HTTPRequest(url: url(peer, "/drop-next")))
        // The server reads this GET on the marked (pooled) connection and closes it without an answer.
        let seen = try await echo(client, peer)
        #expect(seen.method == "GET")
        #expect(seen.connection != marked.connection)
    }

    @Test func aPOSTOnAConnectionTheServerDroppedIsNotSentTwice() async throws {
        let peer = try await PythonPeer.shared("http_transport_peer.py")
        let client = HTTPClient()
        let key = "post-\(UUID().uuidString)"
        _ = try await client.send(HTTPRequest(url: url(peer, "/drop-next")))
        let post = HTTPRequest(method: .post, url: url(peer, "/count?key=\(key)"), body: Data("once".utf8))
        let error = await #expect(throws: HTTPError.self) { _ = try await client.send(post) }
        #expect(error == .transport)
        // The dropped POST reached the server once; this GET is the second request it counts, not the third.
        let count = try await client.decode(Count.self, from: HTTPRequest(url: url(peer, "/count?key=\(key)")))
        #expect(count.count == 2)
    }

    @Test func aChunkedBodyIsReassembled() async throws {
        let peer = try await PythonPeer.shared("http_transport_peer.py")
        let client = HTTPClient()
        let response = try await client.send(HTTPRequest(url: url(peer, "/chunked?bytes=100003&chunk=777")))
        let pattern = Array("0123456789".utf8)
        #expect(response.body.count == 100_003)
        #expect(response.body.enumerated().allSatisfy { $0.element == pattern[$0.offset % 777 % 10] })
        #expect(response.headers["Transfer-Encoding"] == "chunked")
        // The connection stays usable after a chunked body.
        let again = try await client.send(HTTPRequest(url: url(peer, "/chunked?bytes=10&chunk=3")))
        #expect(again.body == Data("0120120120".utf8))
    }

    @Test func aChunkedBodyPastTheLimitStopsWithinOneChunkOfIt() async throws {
        let peer = try await PythonPeer.shared("http_transport_peer.py")
        let client = HTTPClient(configuration: .init(maximumResponseSize: 50_000))
        let error = await #expect(throws: HTTPError.self) {
            _ = try await client.send(HTTPRequest(url: url(peer, "/chunked?bytes=400000&chunk=1000")))
        }
        #expect(error == .transport)
        #expect(error?.underlyingDescription?.contains("exceeds") == true)
        // Judged chunk piece by chunk piece as the bytes arrive: never more than one chunk past the limit.
        #expect(client.bodyBytesReceived > 50_000)
        #expect(client.bodyBytesReceived <= 51_000)
    }

    @Test func aServerThatNeverAnswersHitsTheDeadlineOnTheInjectedClock() async throws {
        let peer = try await PythonPeer.shared("http_transport_peer.py")
        let clock = TestClock()
        let client = HTTPClient(configuration: .init(timeout: .seconds(30), clock: clock))
        let key = "deadline-\(UUID().uuidString)"
        let call = Task { try await client.send(HTTPRequest(url: url(peer, "/hold?key=\(key)"))) }
        let arrived = try await HTTPClient().decode(
            Held.self, from: HTTPRequest(url: url(peer, "/held?key=\(key)&wait=arrived")))
        #expect(arrived.arrived)
        #expect(await clock.waitForSleepers(1))
        await clock.advance(by: .seconds(30))
        let error = await #expect(throws: HTTPError.self) { _ = try await call.value }
        #expect(error == .timedOut)
        // The connection was closed, not left waiting (nor pooled).
        let held = try await HTTPClient().decode(
            Held.self, from: HTTPRequest(url: url(peer, "/held?key=\(key)&wait=closed")))
        #expect(held.closed)
    }

    @Test func cancellingACallClosesItsConnection() async throws {
        let peer = try await PythonPeer.shared("http_transport_peer.py")
        let client = HTTPClient()
        let key = "cancel-\(UUID().uuidString)"
        let call = Task { try await client.send(HTTPRequest(url: url(peer, "/hold?key=\(key)"))) }
        _ = try await HTTPClient().send(HTTPRequest(url: url(peer, "/held?key=\(key)&wait=arrived")))
        call.cancel()
        await #expect(throws: CancellationError.self) { _ = try await call.value }
        let held = try await HTTPClient().decode(
            Held.self, from: HTTPRequest(url: url(peer, "/held?key=\(key)&wait=closed")))
        #expect(held.closed)
    }

    @Test(arguments: [
        (303, "POST", "GET", false), (302, "POST", "GET", false), (301, "POST", "GET", false),
        (307, "POST", "POST", true), (308, "PUT", "PUT", true), (302, "PUT", "PUT", true), (303, "PUT", "GET", false),
    ])
    func redirectsFollowTheMethodRules(status: Int, method: String, expected: String, keepsBody: Bool) async throws {
        let peer = try await PythonPeer.shared("http_transport_peer.py")
        let client = HTTPClient()
        var request = HTTPRequest(
            method: HTTPMethod(rawValue: method), url: url(peer, "/redirect?status=\(status)&to=/echo"),
            body: Data("twelve bytes".utf8), bearerToken: "same-origin-t0k")
        request.headers["Content-Type"] = "text/plain"
        let response = try await client.send(request)
        let seen = try JSONDecoder().decode(Echo.self, from: response.body)
        #expect(response.url == url(peer, "/echo"))
        #expect(seen.method == expected)
        #expect(seen.body_length == (keepsBody ? 12 : 0))
        #expect(seen.content_type == (keepsBody ? "text/plain" : nil))
        // The hop stays on the origin, so the token goes with it.
        #expect(seen.header("Authorization") == ["Bearer same-origin-t0k"])
    }

    @Test func aRedirectLoopEndsWithATransportError() async throws {
        let peer = try await PythonPeer.shared("http_transport_peer.py")
        let error = await #expect(throws: HTTPError.self) {
            _ = try await HTTPClient().send(HTTPRequest(url: url(peer, "/redirect-loop")))
        }
        #expect(error == .transport)
        #expect(error?.underlyingDescription?.contains("redirects") == true)
    }

    @Test func aRedirectWithoutLocationIsTheAnswer() async throws {
        let peer = try await PythonPeer.shared("http_transport_peer.py")
        let response = try await HTTPClient().response(
            for: HTTPRequest(url: url(peer, "/redirect?status=302&to=")))
        #expect(response.status == 302)
    }
}
