import Foundation
import Testing
import TidingsCore
import TidingsNet

/// Waiting for a reconnect, and the schedule of reconnect attempts, on a virtual clock.
@Suite(.timeLimit(.minutes(1))) struct ReconnectLayerTests {
    @Test func waitersLearnOfTheReconnectOrGiveUpAtTheirDeadline() async throws {
        let clock = TestClock()
        let waiters = ReconnectWaiters(clock: clock)
        let early = Task { await waiters.wait(atMost: .seconds(2)) }
        let patient = Task { await waiters.wait(atMost: .seconds(10)) }
        #expect(await clock.waitForSleepers(2))
        await clock.advance(by: .seconds(2))
        #expect(await early.value == false)
        #expect(waiters.count == 1)
        waiters.resumeAll(reconnected: true)
        #expect(await patient.value == true)
        #expect(waiters.count == 0)
        #expect(await eventually { clock.pendingSleepers == 0 })
    }

    @Test func aCancelledOrAbandonedWaitEndsFalse() async throws {
        let clock = TestClock()
        let waiters = ReconnectWaiters(clock: clock)
        let cancelled = Task { await waiters.wait(atMost: .seconds(10)) }
        let abandoned = Task { await waiters.wait(atMost: .seconds(10)) }
        #expect(await clock.waitForSleepers(2))
        cancelled.cancel()
        #expect(await cancelled.value == false)
        waiters.resumeAll(reconnected: false)
        #expect(await abandoned.value == false)
        // A reconnect after the waits ended resumes nothing twice.
        waiters.resumeAll(reconnected: true)
        #expect(waiters.count == 0)
    }

    /// A reproducible stand-in for the system generator (SplitMix64).
    static func seeded(_ seed: UInt64) -> @Sendable () -> Double {
        let state = LockedState(seed)
        return {
            state.withLock { state in
                state &+= 0x9E37_79B9_7F4A_7C15
                var mixed = state
                mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
                mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
                return Double((mixed ^ (mixed >> 31)) >> 11) / Double(1 << 53)
            }
        }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func attemptsFollowTheBackoffWithSeededJitterUnderTheCap(seed: UInt64) async throws {
        let clock = TestClock()
        let driver = ReconnectDriver(
            backoff: Backoff(base: .seconds(1), cap: .seconds(8), random: Self.seeded(seed)), clock: clock)
        var expected = Backoff(base: .seconds(1), cap: .seconds(8), random: Self.seeded(seed))
        let delays = (0..<6).map { _ in expected.nextDelay() }
        #expect(delays.allSatisfy { $0 >= .zero && $0 <= .seconds(8) })
        #expect(Set(delays).count > 1, "jitter varies the delays")
        let attempts = LockedState(0)
        let run = Task {
            await driver.run {
                attempts.withLock { count in
                    count += 1
                    return count == 6
                }
            }
        }
        for (index, delay) in delays.enumerated() {
            #expect(await clock.waitForSleepers(1))
            if delay > .milliseconds(1) {
                await clock.advance(by: delay - .milliseconds(1))
                #expect(attempts.withLock { $0 } == index, "attempt \(index + 1) waits \(delay)")
            }
            await clock.advance(by: min(delay, .milliseconds(1)))
            #expect(await eventually { attempts.withLock { $0 } == index + 1 }, "attempt \(index + 1)")
        }
        #expect(await run.value == 6)
    }

    @Test func cancellingTheDriverStopsItBetweenAttempts() async throws {
        let clock = TestClock()
        let driver = ReconnectDriver(backoff: Backoff(base: .seconds(1), cap: .seconds(4), random: { 1 }), clock: clock)
        let attempts = LockedState(0)
        let run = Task {
            await driver.run {
                attempts.withLock { $0 += 1 }
                return false
            }
        }
        #expect(await clock.waitForSleepers(1))
        run.cancel()
        #expect(await run.value == nil)
        #expect(attempts.withLock { $0 } == 0)
    }
}

/// Yields until `condition` holds, or gives up after many yields (never sleeps).
private func eventually(_ condition: () async -> Bool) async -> Bool {
    for _ in 0..<100_000 {
        if await condition() { return true }
        await Task.yield()
    }
    return await condition()
}
