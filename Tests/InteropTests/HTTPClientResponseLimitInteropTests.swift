import Foundation
import PeerSupport
import Testing
import TidingsNet

/// `HTTPClient.Configuration.maximumResponseSize` against aiohttp streaming a body far larger than the
/// limit (Tests/Peers/http_peer.py `/large`): the client must stop receiving soon after the limit, not
/// download the whole body and refuse it afterwards.
@Suite(.timeLimit(.minutes(2))) struct HTTPClientResponseLimitInteropTests {
    private static let limit = 1 << 20

    @Test func aBodyPastTheLimitStopsTheDownloadNearTheLimit() async throws {
        let peer = try await PythonPeer.start("http_peer.py")
        defer { peer.stop() }
        // The body never ends: only a client that stops receiving can get an answer before its timeout.
        let client = HTTPClient(configuration: .init(timeout: .seconds(30), maximumResponseSize: Self.limit))
        let url = URL(string: "http://127.0.0.1:\(peer.port)/large?chunk=16384&pace_ms=1&tag=paced")!
        let error = await #expect(throws: HTTPError.self) { _ = try await client.send(HTTPRequest(url: url)) }
        #expect(error == .transport)
        #expect(error?.underlyingDescription?.contains("exceeds") == true)
        // The caller is answered as soon as the limit is passed, not when the transfer has ended.
        #expect(client.bodyBytesReceived > Self.limit)
        // How much the peer wrote before the client left (it answers once its response has ended, or after 30 s).
        let reportURL = URL(string: "http://127.0.0.1:\(peer.port)/large-sent?tag=paced")!
        let report = try await HTTPClient().decode(
            SentReport.self, from: HTTPRequest(url: reportURL, timeout: .seconds(45)))
        #expect(report.ended, "the peer is still sending")
        // At most 16 KiB per millisecond are sent (a fast network, slower than loopback). swift-corelibs-
        // foundation reads the socket on its session's work queue, and the cancellation queues behind the reads
        // already waiting there (unpaced, the peer was measured writing 25-230 MiB past a 1 MiB limit). Paced,
        // 1.1-1.4 MiB were sent; the allowance covers half a second of lag, and a client that never stopped
        // would be sent data until its 30 s timeout.
        #expect(report.sent < Self.limit + 8 << 20, "sent \(report.sent) bytes")
    }

    /// What `/large-sent` reports.
    private struct SentReport: Decodable {
        var sent: Int
        var ended: Bool
    }

    @Test func aDeclaredLengthPastTheLimitIsRefusedBeforeTheBody() async throws {
        let peer = try await PythonPeer.start("http_peer.py")
        defer { peer.stop() }
        // The peer sends `Content-Length: limit + 1` and then holds the body back until the client leaves: a
        // client that waited for body bytes to pass the limit would wait until its timeout.
        let client = HTTPClient(configuration: .init(timeout: .seconds(30), maximumResponseSize: Self.limit))
        let url = URL(string: "http://127.0.0.1:\(peer.port)/declared-then-hold?length=\(Self.limit + 1)")!
        let error = await #expect(throws: HTTPError.self) { _ = try await client.send(HTTPRequest(url: url)) }
        #expect(error == .transport)
        #expect(error?.underlyingDescription?.contains("exceeds") == true)
        #expect(client.bodyBytesReceived == 0)
    }

    @Test func aDeclaredLengthAtTheLimitIsDelivered() async throws {
        let peer = try await PythonPeer.start("http_peer.py")
        defer { peer.stop() }
        let client = HTTPClient(configuration: .init(maximumResponseSize: Self.limit))
        let url = URL(string: "http://127.0.0.1:\(peer.port)/large?bytes=\(Self.limit)&declare=1")!
        let response = try await client.send(HTTPRequest(url: url))
        #expect(response.headers["Content-Length"] == "\(Self.limit)")
        #expect(response.body.count == Self.limit)
    }

    @Test func aHEADResponseIsNotJudgedByItsContentLength() async throws {
        let peer = try await PythonPeer.start("http_peer.py")
        defer { peer.stop() }
        // A HEAD answer declares the length of the body a GET would get, and carries none.
        let client = HTTPClient(configuration: .init(maximumResponseSize: Self.limit))
        let url = URL(string: "http://127.0.0.1:\(peer.port)/large?bytes=\(2 * Self.limit)&declare=1")!
        let response = try await client.send(HTTPRequest(method: .head, url: url))
        #expect(response.headers["Content-Length"] == "\(2 * Self.limit)")
        #expect(response.body.isEmpty)
    }

    @Test func aBodyAtTheLimitIsDelivered() async throws {
        let peer = try await PythonPeer.start("http_peer.py")
        defer { peer.stop() }
        let client = HTTPClient(configuration: .init(maximumResponseSize: Self.limit))
        let url = URL(string: "http://127.0.0.1:\(peer.port)/large?bytes=\(Self.limit)")!
        let response = try await client.send(HTTPRequest(url: url))
        #expect(response.body.count == Self.limit)
        #expect(client.bodyBytesReceived == Self.limit)
    }
}
