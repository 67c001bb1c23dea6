import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsNet
import TidingsSandbox

@testable import TidingsOpenMates

/// Prefetch over real loopback HTTP (URLSession through TidingsNet's HTTPClient) against the sandbox: the
/// session travels in the `auth_refresh_token` cookie and never reaches a URL or a log.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesPrefetchLoopbackTests {
    static let token = "refresh-SECRET-0815"

    static func prefetcher(
        origin: URL, token: String,
        store: OpenMatesStore, logs: LogCollector
    ) throws -> OpenMatesPrefetcher {
        let logger = TidingsLogger(subsystem: "test", minimumLevel: .debug, sink: logs.append)
        let transport = try OpenMatesPrefetchHTTPTransport(
            origin: origin, refreshToken: token, client: HTTPClient(configuration: .init(logger: logger)))
        // No spacing: the virtual clock is not advanced here; the HTTP client's own timeout bounds each request.
        return OpenMatesPrefetcher(
            configuration: .init(spacing: .zero), transport: transport, store: store, clock: TestClock(),
            conditions: PrefetchHarness.allowed, logger: logger)
    }

    @Test func aPassOverLoopbackHTTPStoresEveryPageWithTheCookieInAHeaderOnly() async throws {
        let server = OpenMatesSandboxServer(token: Self.token)
        await server.seed(parents: 16, messagesEach: 2)
        let endpoint = OpenMatesSandboxPrefetchEndpoint(server: server)
        let listener = try endpoint.serve()
        defer { listener.stop() }
        let logs = LogCollector()
        let store = try OpenMatesStore.inMemory()
        let prefetcher = try Self.prefetcher(origin: listener.url, token: Self.token, store: store, logs: logs)
        await prefetcher.start()
        #expect(await eventually { await prefetcher.state == .finished })
        #expect(endpoint.served.map(\.cursor) == [10, 13])
        #expect(try Set(store.chatList().map(\.chatID)) == Set((10..<16).map(chatID)))
        #expect(try store.count(.messages) == 12)
        #expect(!logs.messages.joined().contains("SECRET"))
        #expect(!endpoint.log.entries.map(\.description).joined().contains("SECRET"))
    }

    @Test func aWrongSessionIsUnauthorizedAndStoresNothing() async throws {
        let server = OpenMatesSandboxServer(token: Self.token)
        await server.seed(parents: 16)
        let endpoint = OpenMatesSandboxPrefetchEndpoint(server: server)
        let listener = try endpoint.serve()
        defer { listener.stop() }
        let logs = LogCollector()
        let store = try OpenMatesStore.inMemory()
        let prefetcher = try Self.prefetcher(
            origin: listener.url, token: "wrong-SECRET", store: store, logs: logs)
        await prefetcher.start()
        #expect(await eventually { await prefetcher.state == OpenMatesPrefetcher.State.failed(.unauthorized) })
        #expect(try store.count(.chats) == 0)
        if case .failed(let error) = await prefetcher.state { #expect(!"\(error)".contains("SECRET")) }
        #expect(!logs.messages.joined().contains("SECRET"))
    }
}
