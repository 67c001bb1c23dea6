import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsOpenMates

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `tidings sandbox openmates` also serves the prefetch endpoint: a prefetcher fills a store with only what it
/// printed.
@Suite(.timeLimit(.minutes(1))) struct SandboxOpenMatesPrefetchCommandTests {
    @Test func aPrefetcherFillsAStoreFromThePrintedEndpoint() async throws {
        let child = try ChildProcess.spawn(
            executable: ToolRun.executable.path, arguments: ["sandbox", "openmates"], standardError: .nullDevice)
        defer { child.signal(SIGKILL) }
        let (printed, complete) = try await child.readOutput(timeout: .seconds(30)) { data in
            String(decoding: data, as: UTF8.self).contains("\nconnect: ")
        }
        #expect(complete)
        let lines = String(decoding: printed, as: UTF8.self).split(separator: "\n")
        let token = try #require(lines.first { $0.hasPrefix("token: ") }?.dropFirst(7).split(separator: " ").first)
        let line = try #require(lines.first { $0.hasPrefix("prefetch: POST ") })
        let url = try #require(line.dropFirst("prefetch: POST ".count).split(separator: " ").first)
        let origin = try #require(URL(string: String(url).components(separatedBy: "/v1/")[0]))
        let store = try OpenMatesStore.inMemory()
        // No spacing on a clock nobody advances: the HTTP client's own timeout bounds each request.
        let prefetcher = OpenMatesPrefetcher(
            configuration: .init(spacing: .zero),
            transport: try OpenMatesPrefetchHTTPTransport(origin: origin, refreshToken: String(token)),
            store: store, clock: TestClock(), conditions: .init(isOnline: true))
        await prefetcher.start()
        var iterator = prefetcher.events().makeAsyncIterator()
        while let event = await iterator.next() {
            if case .state(.finished) = event { break }
            if case .state(.failed) = event { break }
        }
        #expect(await prefetcher.state == .finished)
        // 24 parents and 2 sub-chats: offsets 10…25 are prefetched.
        #expect(try store.count(.chats) == 16)
        child.signal(SIGINT)
        _ = try await child.readOutput(timeout: .seconds(20)) { _ in false }
        #expect(await child.waitForExit(timeout: .seconds(20)) == .exited(0))
    }
}
