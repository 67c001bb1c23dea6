import Foundation
import Testing
import TidingsCore
import TidingsNet

@testable import TidingsMastodon

/// A 429's `Retry-After` holds the account's next request until it ends, on the virtual clock.
@Suite(.timeLimit(.minutes(1)))
struct MastodonRateLimitTests {
    private static let epoch = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func retryAfterIsHonouredByTheBudget() async throws {
        let clock = TestClock()
        let wall: @Sendable () -> Date = { Self.epoch.addingTimeInterval(Double(clock.now.offset.components.seconds)) }
        let budget = RateBudget(configuration: .mastodon, clock: clock, wallClock: wall, random: { 0.5 })
        let calls = LockedState(0)
        let transport = ScriptedTransport { _ in
            let call = calls.withLock { count -> Int in
                count += 1
                return count
            }
            return call == 1 ? (429, ["Retry-After": "30"], #"{"error":"Too many requests"}"#) : (200, [:], "[]")
        }
        let client = transport.client(budget: budget, now: wall)
        do {
            _ = try await client.homeTimeline()
            Issue.record("expected a 429")
        } catch let error as MastodonError {
            #expect(error == .rateLimited)
            #expect(error.retryAfterSeconds == 30)
        }
        let next = Task { try await client.homeTimeline() }
        #expect(await clock.waitForSleepers())
        await clock.advance(by: .seconds(29))
        #expect(transport.requests.count == 1)
        await clock.advance(by: .seconds(1))
        _ = try await next.value
        #expect(transport.requests.count == 2)
    }
}
