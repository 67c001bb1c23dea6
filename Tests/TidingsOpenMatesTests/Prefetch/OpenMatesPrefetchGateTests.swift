import Foundation
import Testing
import TidingsCore
import TidingsSandbox

@testable import TidingsOpenMates

/// Each device condition stops prefetch at once (the request in flight is cancelled and its page dropped)
/// and prefetch resumes from the same cursor when the conditions allow it again.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesPrefetchGateTests {
    static let blocking: [(OpenMatesPrefetchConditions, OpenMatesPrefetchConditions.Block)] = [
        (.init(isOnline: false), .offline),
        (.init(isOnline: true, isExpensive: true), .expensiveNetwork),
        (.init(isOnline: true, isConstrained: true), .constrainedNetwork),
        (.init(isOnline: true, isLowPowerModeEnabled: true), .lowPowerMode),
        (.init(isOnline: true, thermalState: .serious), .thermalState),
        (.init(isOnline: true, thermalState: .critical), .thermalState),
    ]

    @Test func theConditionsAllowOnlyACheapCoolPath() {
        #expect(OpenMatesPrefetchConditions.unknown.block == .offline)
        #expect(OpenMatesPrefetchConditions(isOnline: true).allowsPrefetch)
        #expect(OpenMatesPrefetchConditions(isOnline: true, thermalState: .fair).allowsPrefetch)
        for (conditions, block) in Self.blocking { #expect(conditions.block == block) }
    }

    @Test(arguments: 0..<6)
    func eachConditionStopsItAtOnceAndItResumesWhenAllowedAgain(index: Int) async throws {
        let (blocked, reason) = Self.blocking[index]
        let harness = try PrefetchHarness(server: await seededServer(parents: 30))
        await harness.prefetcher.start()
        #expect(await eventually { harness.events.pages.count == 1 })
        // The next request is held on the server (5 s) when the condition changes: it is cancelled.
        harness.endpoint.faults.add(.delay(.seconds(5)), on: .path(PrefetchHarness.path), times: 1)
        await harness.clock.advance(by: .seconds(2))
        #expect(await harness.clock.waitForSleepers(2))
        await harness.prefetcher.update(blocked)
        #expect(await harness.state() == .blocked(reason))
        #expect(await eventually { harness.endpoint.log.entries.count == 2 })
        #expect(harness.endpoint.log.entries.last?.status == 0)
        #expect(try harness.store.prefetchCursor() == 13)
        // Blocked, nothing goes out however long we wait.
        await harness.clock.advance(by: .seconds(120))
        #expect(harness.endpoint.log.entries.count == 2)
        #expect(harness.events.pages.count == 1)
        // Allowed again: it resumes from the cursor it stopped at and finishes.
        await harness.prefetcher.update(PrefetchHarness.allowed)
        #expect(await harness.drive { await harness.state() == .finished })
        #expect(harness.servedCursors() == [10, 13, 16, 19, 22, 25, 28])
        #expect(try harness.storedChatIDs() == Set((10..<30).map(chatID)))
    }

    @Test func itDoesNotStartWhileBlockedAndAChangeThatStillAllowsItDoesNotStopIt() async throws {
        let harness = try PrefetchHarness(
            server: await seededServer(parents: 20), conditions: .init(isOnline: true, isLowPowerModeEnabled: true))
        await harness.prefetcher.start()
        #expect(await harness.state() == .blocked(.lowPowerMode))
        await harness.clock.advance(by: .seconds(30))
        #expect(harness.endpoint.log.entries.isEmpty)
        await harness.prefetcher.update(PrefetchHarness.allowed)
        #expect(await eventually { harness.events.pages.count == 1 })
        await harness.prefetcher.update(.init(isOnline: true, thermalState: .fair))
        #expect(await harness.drive { await harness.state() == .finished })
        #expect(harness.servedCursors() == [10, 13, 16, 19])
    }

    @Test func thirtyAMinuteThroughTheRateBudgetAndTheServersRetryAfter() async throws {
        // No spacing: only the budget paces (30 at once, then one every 2 s); the server's sliding window
        // refuses the 31st with Retry-After 58 and the budget holds every request until then.
        let harness = try PrefetchHarness(
            server: await seededServer(parents: 100),
            configuration: .init(chunkSize: 1, spacing: .zero, requestTimeout: .seconds(3600)))
        await harness.prefetcher.start()
        #expect(await eventually { harness.endpoint.served.count == 30 })
        #expect(await harness.clock.waitForSleepers(1))
        #expect(harness.endpoint.served.count == 30)
        #expect(harness.endpoint.served.allSatisfy { $0.at == .zero && $0.status == 200 })
        await harness.clock.advance(by: .milliseconds(1999))
        #expect(harness.endpoint.served.count == 30)
        await harness.clock.advance(by: .milliseconds(1))
        #expect(await eventually { harness.endpoint.served.count == 31 })
        #expect(harness.endpoint.served.last?.status == 429)
        #expect(await eventually { harness.events.all.contains(.rateLimited) })
        #expect(await harness.clock.waitForSleepers(1))
        await harness.clock.advance(to: harness.clock.now.advanced(by: .seconds(57)))
        #expect(harness.endpoint.served.count == 31)
        #expect(await harness.drive { harness.endpoint.served.count == 32 })
        #expect(harness.endpoint.served.last?.at == .seconds(60))
        #expect(harness.endpoint.served.last?.status == 200)
        #expect(harness.endpoint.served.last?.cursor == 40)
        await harness.prefetcher.stop()
    }

    @Test func a429sRetryAfterHoldsTheNextRequestBeyondTheSpacing() async throws {
        let harness = try PrefetchHarness(server: await seededServer(parents: 20))
        harness.endpoint.faults.add(.tooManyRequests(retryAfterSeconds: 7), on: .path(PrefetchHarness.path), times: 1)
        await harness.prefetcher.start()
        #expect(await harness.drive { await harness.state() == .finished })
        let entries = harness.endpoint.log.entries
        #expect(entries.map(\.status) == [429, 200, 200, 200, 200])
        #expect(harness.endpoint.served.map(\.at) == [.seconds(7), .seconds(9), .seconds(11), .seconds(13)])
        #expect(harness.servedCursors() == [10, 13, 16, 19])
    }
}
