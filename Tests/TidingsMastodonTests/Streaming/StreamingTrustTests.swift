import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsNet
import TidingsSandbox
import TidingsSandboxKit

/// The streaming URL is the server's word: the bearer token goes to it only over `wss` (plain `ws` only for a
/// plain-http API on loopback) and only to the API's host or its registrable domain; otherwise the stream gives
/// up with the reason in its state, logged without the token, and polling stays.
@Suite(.timeLimit(.minutes(1)))
struct StreamingTrustTests {
    /// The sandbox, with its v2 instance answer naming `streaming` as the streaming URL.
    struct InstanceRewriting: MastodonTransport {
        let inner: MastodonSandboxTransport
        let streaming: String

        func response(for request: HTTPRequest) async throws -> HTTPResponse {
            let response = try await inner.response(for: request)
            guard request.url.path == "/api/v2/instance",
                var object = try JSONSerialization.jsonObject(with: response.body) as? [String: Any],
                var configuration = object["configuration"] as? [String: Any]
            else { return response }
            configuration["urls"] = ["streaming": streaming]
            object["configuration"] = configuration
            return HTTPResponse(
                status: response.status, headers: response.headers,
                body: try JSONSerialization.data(withJSONObject: object), url: response.url)
        }
    }

    static let api = URL(string: "https://social.example.com")!

    @Test func theRule() {
        func allowed(_ streaming: String, api: URL = StreamingTrustTests.api) -> Bool {
            MastodonStreamingTrust.refusal(streaming: URL(string: streaming)!, api: api) == nil
        }
        #expect(allowed("wss://social.example.com"))
        #expect(allowed("https://social.example.com:4000"))
        #expect(allowed("wss://streaming.example.com"))
        #expect(allowed("wss://example.com"))
        #expect(allowed("wss://Streaming.Example.COM."))
        #expect(!allowed("ws://social.example.com"), "not encrypted")
        #expect(!allowed("ws://other.example"))
        #expect(!allowed("wss://evil.example"))
        #expect(!allowed("wss://example.com.evil.example"))
        #expect(!allowed("wss://notexample.com"))
        #expect(!allowed("ftp://social.example.com"))
        // A development server: plain ws only when the API itself is plain http on loopback.
        let local = URL(string: "http://127.0.0.1:3000")!
        #expect(allowed("ws://127.0.0.1:4000", api: local))
        #expect(!allowed("ws://127.0.0.2:4000", api: local), "an IP literal accepts only itself")
        #expect(allowed("ws://localhost:4000", api: URL(string: "http://localhost:3000")!))
        #expect(!allowed("ws://social.example.com", api: URL(string: "http://social.example.com")!))
        #expect(!allowed("wss://10.0.0.2", api: URL(string: "https://10.0.0.1")!))
        #expect(allowed("wss://[::1]:4000", api: URL(string: "http://[::1]:3000")!))
    }

    /// Starts a stream for an account at ``api`` whose instance names `streaming`; the state it settles in,
    /// what the connector was asked and what was logged.
    func start(naming streaming: String) async throws -> (MastodonStreamState, [(URL, [String])], [LogRecord]) {
        let fixture = try await EngineFixture()
        let client = MastodonAPIClient(
            server: Self.api, accountKey: "alice@social.example.com",
            authorization: MastodonAuthorization(token: "alice-token"),
            transport: InstanceRewriting(inner: MastodonSandboxTransport(server: fixture.http), streaming: streaming))
        let engine = MastodonAccountEngine(client: client, store: fixture.store, clock: fixture.clock)
        let script = UserStreamTests.ScriptedConnector()
        script.queue(UserStreamTests.ScriptedConnection())
        let records = LockedState<[LogRecord]>([])
        let logger = TidingsLogger(subsystem: "test", minimumLevel: .debug) { record in
            records.withLock { $0.append(record) }
        }
        let stream = MastodonUserStream(
            engine: engine, connector: script.connector, clock: fixture.clock, logger: logger)
        var states = stream.stateChanges().makeAsyncIterator()
        await stream.start()
        let settled = await UserStreamTests.next(&states) { state in
            switch state {
            case .open, .gaveUp: true
            default: false
            }
        }
        await stream.stop()
        return (settled ?? .stopped, script.asked, records.withLock { $0 })
    }

    @Test(arguments: ["ws://other.example", "wss://evil.example"])
    func aStreamingURLOutsideTheRuleGetsNoTokenAndTheReasonIsInTheState(_ streaming: String) async throws {
        let (state, asked, records) = try await start(naming: streaming)
        guard case .gaveUp(.untrustedStreamingURL(let reason)) = state else {
            Issue.record("the stream did not refuse \(streaming): \(state)")
            return
        }
        #expect(asked.isEmpty, "no connection, so no token, went to \(streaming)")
        #expect(reason.contains(URL(string: streaming)!.host!))
        let record = try #require(records.first { $0.level == .warning })
        #expect(record.subsystem == "mastodon.stream")
        #expect(record.message.contains(reason))
        #expect(!records.contains { $0.message.contains("alice-token") })
    }

    @Test func aStreamingHostUnderTheAPIsDomainGetsTheToken() async throws {
        let (state, asked, records) = try await start(naming: "wss://streaming.example.com")
        #expect(state == .open)
        let (url, headers) = try #require(asked.first)
        #expect(url.absoluteString == "wss://streaming.example.com/api/v1/streaming?stream=user")
        #expect(headers.contains("Authorization: Bearer alice-token"))
        #expect(records.isEmpty)
    }
}
