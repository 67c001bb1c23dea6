import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsNet

// The Socket.IO and HTTP code of Sources/TidingsNet/Documentation.docc/GettingStarted.md, run as written
// against the real python-socketio and aiohttp peers on loopback: when an article's snippet stops compiling
// or stops doing what the article says, this fails.

private struct Items: Decodable {
    struct Item: Decodable { var id: String }
    var items: [Item]
}

@Suite(.timeLimit(.minutes(2))) struct NetDocSnippetTests {
    @Test func useSocketIO() async throws {
        let serverURL = try await PythonPeer.shared("socketio_server.py").url

        let client = SocketIOClient(url: serverURL)
        try await client.connect()
        let reply = try await client.emitWithAck("echo", "hello", timeout: .seconds(5))
        #expect(reply == ["hello"])

        try await client.emit("burst", 3)
        var ticks: [JSONValue] = []
        for await event in client.events {
            if case .event(name: "tick", let arguments, _) = event {
                ticks += arguments
                if ticks.count == 3 { break }
            }
        }
        #expect(ticks == [0, 1, 2])
        await client.disconnect()
    }

    @Test func sendHTTPRequests() async throws {
        let peer = try await PythonPeer.shared("http_peer.py")
        let baseURL = try #require(URL(string: "http://127.0.0.1:\(peer.port)/"))
        let token = "secret-token"
        // The article's budget runs on ContinuousClock; a virtual one here makes the hold exact.
        let budgetClock = TestClock()

        let budget = RateBudget(clock: budgetClock)
        let http = HTTPClient(configuration: .init(timeout: .seconds(15), rateBudget: budget))
        let items = try await http.decode(Items.self, from: HTTPRequest(url: baseURL.appendingPathComponent("json")))
        #expect(items.items.map(\.id) == ["1", "2"])

        var caught: HTTPError?
        do {
            _ = try await http.send(HTTPRequest(url: baseURL.appendingPathComponent("ratelimited"), bearerToken: token))
        } catch let error as HTTPError where error == .status {
            caught = error
        }
        #expect(caught?.status == 429)
        #expect(caught?.serverMessage == "Too many requests")
        #expect(caught?.description.contains(token) == false)
        #expect(await budget.status(host: "127.0.0.1").blockedFor == .seconds(120))
    }
}
