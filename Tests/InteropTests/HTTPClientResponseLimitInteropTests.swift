import Foundation
import PeerSupport
import Testing
import TidingsNet

/// `HTTPClient.Configuration.maximumResponseSize` against aiohttp streaming a body far larger than the
/// limit (Tests/Peers/http_peer.py `/large`): the client must stop receiving soon after the limit, not
/// download the whole body and refuse it afterwards.
@Suite(.timeLimit(.minutes(2))) struct HTTPClientResponseLimitInteropTests {
    private static let limit = 1 << 20
    private static let streamed = 64 << 20

    @Test func aBodyPastTheLimitStopsTheDownloadNearTheLimit() async throws {
        let peer = try await PythonPeer.start("http_peer.py")
        defer { peer.stop() }
        let client = HTTPClient(configuration: .init(maximumResponseSize: Self.limit))
        let url = URL(string: "http://127.0.0.1:\(peer.port)/large?bytes=\(Self.streamed)&pace_ms=1")!
        await #expect(throws: HTTPError.self) { _ = try await client.send(HTTPRequest(url: url)) }
        let received = client.bodyBytesReceived
        #expect(received > Self.limit)
        // The server sends at most 64 KiB per millisecond (a fast network, but slower than loopback, where
        // swift-corelibs-foundation's reader outruns its delegate queue and hundreds of MiB are queued
        // before the first cancel can act). Socket buffers and queued chunks let a little more through
        // after the cancel; a client that kept reading would count all 64 MiB.
        #expect(received < Self.limit + 8 << 20, "received \(received) bytes of \(Self.streamed)")
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
