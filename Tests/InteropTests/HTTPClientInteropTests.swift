import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsNet

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Our HTTP client against an aiohttp server (Tests/Peers/http_peer.py).
///
/// The tests share one peer: the server keeps no state between requests (cookies live in each client).
@Suite(.timeLimit(.minutes(2))) struct HTTPClientInteropTests {
    private func url(_ peer: PythonPeer, _ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(peer.port)\(path)")!
    }

    private func cookiesSeen(by client: HTTPClient, peer: PythonPeer) async throws -> [String: String] {
        try await client.decode([String: String].self, from: HTTPRequest(url: url(peer, "/cookies")))
    }

    @Test func cookiesPersistAcrossRequestsAndStayWithTheirClient() async throws {
        let peer = try await PythonPeer.shared("http_peer.py")
        let alice = HTTPClient()
        let bob = HTTPClient()
        _ = try await alice.send(HTTPRequest(url: url(peer, "/cookies/set?name=session&value=alice")))
        _ = try await bob.send(HTTPRequest(url: url(peer, "/cookies/set?name=session&value=bob")))
        _ = try await alice.send(HTTPRequest(url: url(peer, "/cookies/set-two")))
        #expect(try await cookiesSeen(by: alice, peer: peer) == ["session": "alice", "first": "1", "second": "2"])
        #expect(try await cookiesSeen(by: bob, peer: peer) == ["session": "bob"])
        #expect(try await cookiesSeen(by: HTTPClient(), peer: peer) == [:])
        #expect(HTTPCookieStorage.shared.cookies?.isEmpty ?? true)
    }

    @Test func maxAgeExpiresOnTheInjectedTime() async throws {
        let peer = try await PythonPeer.shared("http_peer.py")
        let date = TestDate()
        let client = HTTPClient(configuration: .init(now: { date.now }))
        _ = try await client.send(HTTPRequest(url: url(peer, "/cookies/set?name=short&value=1&max_age=60")))
        _ = try await client.send(HTTPRequest(url: url(peer, "/cookies/set?name=long&value=2&max_age=3600")))
        date.advance(seconds: 59)
        #expect(try await cookiesSeen(by: client, peer: peer) == ["short": "1", "long": "2"])
        date.advance(seconds: 2)
        #expect(try await cookiesSeen(by: client, peer: peer) == ["long": "2"])
    }

    @Test func cookiesSetOnARedirectAreKept() async throws {
        let peer = try await PythonPeer.shared("http_peer.py")
        let client = HTTPClient()
        let seen = try await client.decode([String: String].self, from: HTTPRequest(url: url(peer, "/redirect")))
        #expect(seen == ["hop": "1"])
        #expect(try await cookiesSeen(by: client, peer: peer) == ["hop": "1"])
    }

    @Test func theBearerTokenDoesNotFollowARedirectToAnotherHost() async throws {
        let peer = try await PythonPeer.shared("http_peer.py")
        let client = HTTPClient()
        let sameHost = try await client.decode(
            [String: String?].self, from: HTTPRequest(url: url(peer, "/headers"), bearerToken: "t0k"))
        #expect(sameHost["authorization"] == "Bearer t0k")
        // 127.0.0.1 redirects to localhost: the same machine, but another host as far as trust goes.
        let elsewhere = try await client.decode(
            [String: String?].self, from: HTTPRequest(url: url(peer, "/redirect-to-localhost"), bearerToken: "t0k"))
        #expect(elsewhere["authorization"] == .some(nil))
    }

    @Test func multipartUploadArrivesAsTheServerParsesIt() async throws {
        let peer = try await PythonPeer.shared("http_peer.py")
        struct Parsed: Decodable, Equatable {
            struct File: Decodable, Equatable {
                var filename: String
                var content_type: String?
                var size: Int
                var sha256: String
            }
            var fields: [String: String]
            var files: [String: File]
        }
        let image = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        var form = MultipartFormData()
        form.addField(name: "description", value: "Ein Bild, \"gequotet\" – ✓")
        form.addField(name: "empty", value: "")
        form.addFile(name: "file", filename: "cat \"1\".png", contentType: "image/png", data: image)
        let parsed = try await HTTPClient().decode(
            Parsed.self, from: .multipart(url: url(peer, "/multipart"), form: form))
        #expect(parsed.fields == ["description": "Ein Bild, \"gequotet\" – ✓", "empty": ""])
        #expect(parsed.files["file"]?.size == image.count)
        #expect(parsed.files["file"]?.content_type == "image/png")
        #expect(parsed.files["file"]?.sha256 == Self.sha256Hex(image))
        // Quotes in a file name are percent-encoded, as browsers do, so they cannot end the parameter.
        #expect(parsed.files["file"]?.filename == "cat %221%22.png")
    }

    static func sha256Hex(_ data: Data) -> String {
        TidingsCrypto.SHA256.hash(Array(data)).map { String(format: "%02x", $0) }.joined()
    }

    @Test func formBodiesRoundTripWithReservedCharacters() async throws {
        let peer = try await PythonPeer.shared("http_peer.py")
        let fields = [("status", "a b&c=d+e/ü"), ("visibility", "unlisted"), ("empty", "")]
        let parsed = try await HTTPClient().decode(
            [[String]].self, from: .form(url: url(peer, "/form"), fields: fields))
        #expect(parsed == fields.map { [$0.0, $0.1] })
    }

    @Test func a429WithRetryAfterBlocksTheHostInTheBudget() async throws {
        let peer = try await PythonPeer.shared("http_peer.py")
        let clock = TestClock()
        let budget = RateBudget(clock: clock)
        let client = HTTPClient(configuration: .init(rateBudget: budget, clock: clock))
        do {
            _ = try await client.send(HTTPRequest(url: url(peer, "/ratelimited")))
            Issue.record("a 429 is an error")
        } catch let error as HTTPError {
            #expect(error == .status)
            #expect(error.status == 429)
            #expect(error.serverMessage == "Too many requests")
            #expect(error.response?.retryAfter(now: Date()) == .seconds(120))
        }
        #expect(await budget.status(host: "127.0.0.1").blockedFor == .seconds(120))
        // The next request waits for the virtual clock, not for the server.
        let next = Task { try await client.send(HTTPRequest(url: url(peer, "/cookies"))) }
        #expect(await clock.waitForSleepers(1))
        await clock.advance(by: .seconds(119))
        #expect(clock.pendingSleepers == 1)
        await clock.advance(by: .seconds(1))
        #expect(try await next.value.status == 200)
    }

    @Test func errorStatusesCarryTheServersMessage() async throws {
        let peer = try await PythonPeer.shared("http_peer.py")
        await #expect {
            _ = try await HTTPClient().send(HTTPRequest(url: url(peer, "/error")))
        } throws: { error in
            guard let error = error as? HTTPError else { return false }
            return error == .status && error.status == 422
                && error.serverMessage == "Validation failed: text is too long"
        }
    }

    @Test func aDecodingFailureNamesThePathOfTheBadField() async throws {
        let peer = try await PythonPeer.shared("http_peer.py")
        struct Page: Decodable {
            struct Item: Decodable {
                var id: String
                var count: Int
            }
            var items: [Item]
        }
        await #expect {
            _ = try await HTTPClient().decode(Page.self, from: HTTPRequest(url: url(peer, "/json")))
        } throws: { error in
            guard let error = error as? HTTPError else { return false }
            return error == .decoding && error.codingPath == "items[1].count"
        }
    }

    @Test func aSlowServerTimesOutOnTheVirtualClock() async throws {
        let peer = try await PythonPeer.shared("http_peer.py")
        let clock = TestClock()
        let client = HTTPClient(configuration: .init(timeout: .seconds(10), clock: clock))
        let call = Task { try await client.send(HTTPRequest(url: url(peer, "/slow"), timeout: .seconds(5))) }
        #expect(await clock.waitForSleepers(1))
        await clock.advance(by: .seconds(5))
        await #expect {
            _ = try await call.value
        } throws: { error in
            (error as? HTTPError) == .timedOut
        }
    }

    @Test func cancellingARequestThrowsCancellationError() async throws {
        let peer = try await PythonPeer.shared("http_peer.py")
        let clock = TestClock()
        let client = HTTPClient(configuration: .init(clock: clock))
        let call = Task { try await client.send(HTTPRequest(url: url(peer, "/slow"))) }
        #expect(await clock.waitForSleepers(1))
        call.cancel()
        await #expect(throws: CancellationError.self) { _ = try await call.value }
    }

    @Test func theLinkHeaderGivesNextAndPrev() async throws {
        let peer = try await PythonPeer.shared("http_peer.py")
        let response = try await HTTPClient().send(HTTPRequest(url: url(peer, "/page")))
        #expect(response.links["next"] == url(peer, "/page?max_id=100"))
        #expect(response.links["prev"] == url(peer, "/page?min_id=200"))
    }

    @Test func theBearerTokenTravelsInTheHeaderAndNeverInLogsOrErrors() async throws {
        let peer = try await PythonPeer.shared("http_peer.py")
        let secret = "tok-SECRET-9f8e7d"
        let sink = LogCollector()
        let logger = TidingsLogger(subsystem: "test", minimumLevel: .debug) { sink.append($0) }
        let clock = TestClock()
        let client = HTTPClient(configuration: .init(clock: clock, logger: logger))
        func authorized(_ path: String, timeout: Duration? = nil) -> HTTPRequest {
            HTTPRequest(url: url(peer, path), bearerToken: secret, timeout: timeout)
        }
        let seen = try await client.decode([String: String?].self, from: authorized("/headers"))
        #expect(seen["authorization"] == "Bearer \(secret)")
        #expect(seen["query"] == "")
        #expect(seen["user_agent"] == "Tidings")

        var descriptions: [String] = []
        for request in [authorized("/error"), authorized("/ratelimited")] {
            do { _ = try await client.send(request) } catch { descriptions.append("\(error)") }
        }
        let slow = Task { try await client.send(authorized("/slow", timeout: .seconds(1))) }
        #expect(await clock.waitForSleepers(1))
        await clock.advance(by: .seconds(1))
        do { _ = try await slow.value } catch { descriptions.append("\(error)") }
        let closed = try TCPListener.bind(port: 0)
        let deadPort = closed.port
        closed.close()
        let refused = HTTPRequest(url: URL(string: "http://127.0.0.1:\(deadPort)/x")!, bearerToken: secret)
        do { _ = try await client.send(refused) } catch { descriptions.append("\(error)") }

        #expect(descriptions.count == 4)
        #expect(!sink.records.isEmpty)
        for text in descriptions + sink.records.map(\.description) {
            #expect(!text.contains(secret), "\(text)")
        }
    }
}
