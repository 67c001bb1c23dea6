import Dispatch
import Foundation
import PeerSupport
import Testing
import TidingsCore

@testable import TidingsNet

/// A host-name lookup that never answers must not hold a connect past its deadline or its cancellation.
@Suite(.timeLimit(.minutes(1))) struct ResolveCancellationTests {
    /// A resolver stuck until the test lets it go (on a dispatch thread, never the cooperative pool).
    final class StuckLookup: Sendable {
        let release = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)

        func lookup(host: String, port: Int) -> Result<[ResolvedAddress], TransportError> {
            started.signal()
            release.wait()
            return .failure(TransportError(kind: .hostNotFound, operation: "resolve", host: host))
        }
    }

    @Test func aCancelledCallerStopsWaitingForALookupThatNeverAnswers() async throws {
        let stuck = StuckLookup()
        defer { stuck.release.signal() }
        let waiting = Task { try await resolve(host: "stuck.invalid", port: 443, lookup: stuck.lookup) }
        try await onDedicatedThread("lookup started") { stuck.started.wait() }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
    }

    @Test func aDeadlineAroundTheLookupEndsIt() async throws {
        let stuck = StuckLookup()
        defer { stuck.release.signal() }
        let clock = TestClock()
        let waiting = Task {
            try await withTimeout(
                .seconds(3), clock: clock,
                timeoutError: { TransportError(kind: .timedOut, operation: "connect", host: "stuck.invalid") }
            ) { try await resolve(host: "stuck.invalid", port: 443, lookup: stuck.lookup) }
        }
        try await onDedicatedThread("lookup started") { stuck.started.wait() }
        #expect(await clock.waitForSleepers(1))
        await clock.advance(by: .seconds(3))
        await #expect(throws: TransportError.self) { try await waiting.value }
    }

    @Test func aCallerCancelledBeforeTheLookupStartsGetsCancellationToo() async throws {
        let stuck = StuckLookup()
        defer { stuck.release.signal() }
        let waiting = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await resolve(host: "stuck.invalid", port: 443, lookup: stuck.lookup)
        }
        await #expect(throws: CancellationError.self) { try await waiting.value }
    }

    @Test func anAnsweredLookupStillReturnsItsAddresses() async throws {
        let addresses = try await resolve(host: "127.0.0.1", port: 80)
        #expect(addresses.contains { $0.family == AF_INET })
    }
}
