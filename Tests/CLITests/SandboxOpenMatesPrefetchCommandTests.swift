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
        let sandbox = try await SandboxOpenMatesLaunch.start()
        defer { sandbox.child.signal(SIGKILL) }
        let store = try OpenMatesStore.inMemory()
        // No spacing on a clock nobody advances: the HTTP client's own timeout bounds each request.
        let prefetcher = OpenMatesPrefetcher(
            configuration: .init(spacing: .zero),
            transport: try OpenMatesPrefetchHTTPTransport(origin: sandbox.prefetchOrigin, refreshToken: sandbox.token),
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
        _ = try await sandbox.stop()
        #expect(await sandbox.child.waitForExit(timeout: .seconds(20)) == .exited(0))
    }
}
