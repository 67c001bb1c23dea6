import PeerSupport
import Testing

@testable import TidingsNet

/// The read-coalescing policy on virtual time (nanoseconds chosen by the test): when it starts asking
/// the kernel for several messages per wake-up, and that no wait it plans can outlast its delay.
@Suite(.timeLimit(.minutes(1))) struct ReadCoalescerTests {
    let settings = ReadCoalescer.Settings()

    /// `count` wait-then-read cycles, each read of `bytes` coming `gap` ns after its wait began.
    func cycles(_ policy: inout ReadCoalescer, count: Int, bytes: Int, gap: UInt64, from start: inout UInt64) {
        for _ in 0..<count {
            _ = policy.willWait(now: start)
            start += gap
            policy.didRead(count: bytes, now: start)
            start += 1_000
        }
    }

    @Test func aRequestResponseExchangeNeverCoalesces() {
        var policy = ReadCoalescer()
        var now: UInt64 = 1_000_000
        // One message in flight: each answer comes a round trip (150 µs) after the wait began.
        cycles(&policy, count: 500, bytes: 40, gap: 150_000, from: &now)
        #expect(!policy.isCoalescing)
        #expect(policy.willWait(now: now) == .init(lowWatermark: 1, deadline: nil))
    }

    @Test func aBulkTransferNeverCoalesces() {
        var policy = ReadCoalescer()
        var now: UInt64 = 0
        cycles(&policy, count: 500, bytes: 65_536, gap: 5_000, from: &now)
        #expect(!policy.isCoalescing)
    }

    @Test func denseSmallReadsStartCoalescingAfterTheStreakWithADeadline() {
        var policy = ReadCoalescer()
        var now: UInt64 = 0
        cycles(&policy, count: settings.entryStreak - 1, bytes: 34, gap: 10_000, from: &now)
        #expect(!policy.isCoalescing)
        cycles(&policy, count: 1, bytes: 34, gap: 10_000, from: &now)
        #expect(policy.isCoalescing)
        let plan = policy.willWait(now: now)
        #expect(plan.lowWatermark == 34 * settings.readsPerWake)
        #expect(plan.deadline == now + settings.maximumDelay)
    }

    @Test func aSocketLeftAboveOneByteAlwaysWaitsWithADeadline() {
        let policy = ReadCoalescer()
        let ordinary = ReadCoalescer.Plan(lowWatermark: 1, deadline: nil)
        // Lowering the mark failed: the socket still asks for 2,176 bytes, so the wait gets the delay.
        #expect(
            policy.plan(ordinary, onSocketAt: 2_176, now: 5_000)
                == .init(lowWatermark: 2_176, deadline: 5_000 + settings.maximumDelay))
        let coalesced = ReadCoalescer.Plan(lowWatermark: 2_176, deadline: 7_000)
        #expect(policy.plan(coalesced, onSocketAt: 2_176, now: 5_000) == coalesced)
        // Raising the mark failed: the socket wakes on every byte and needs no deadline.
        #expect(policy.plan(coalesced, onSocketAt: 1, now: 5_000) == ordinary)
        #expect(policy.plan(ordinary, onSocketAt: 2_176, now: UInt64.max).deadline != nil)
    }

    @Test func aReadWithoutAWaitBeforeItReadsNoClock() {
        var policy = ReadCoalescer()
        var clockReads = 0
        func clock() -> UInt64 {
            clockReads += 1
            return 0
        }
        policy.didRead(count: 34, now: clock())
        #expect(clockReads == 0)
        _ = policy.willWait(now: 0)
        policy.didRead(count: 34, now: clock())
        #expect(clockReads == 1)
    }

    @Test func theLowWatermarkIsCappedAndNeverOverflows() {
        var policy = ReadCoalescer(settings: .init(smallReadLimit: Int.max, readsPerWake: Int.max))
        var now: UInt64 = 0
        cycles(&policy, count: 4, bytes: Int.max, gap: 1, from: &now)
        #expect(policy.willWait(now: now).lowWatermark == settings.maximumLowWatermark)
    }

    @Test func aWakeUpThatFoundNothingKeepsTheDeadlineWhereItWas() {
        var policy = ReadCoalescer()
        var now: UInt64 = 0
        cycles(&policy, count: 4, bytes: 34, gap: 10_000, from: &now)
        let first = policy.willWait(now: now)
        // A spurious wake-up half-way: the reader waits again, and the deadline does not move.
        let again = policy.willWait(now: now + settings.maximumDelay / 2)
        #expect(again == first)
    }

    @Test func aDeadlineThatPassesWithFewerBytesStopsCoalescingAndDoublesTheStreak() {
        var policy = ReadCoalescer()
        var now: UInt64 = 0
        cycles(&policy, count: 4, bytes: 34, gap: 10_000, from: &now)
        let plan = policy.willWait(now: now)
        policy.didRead(count: 34, now: plan.deadline! + 40_000)
        #expect(!policy.isCoalescing)
        #expect(policy.requiredStreak == 2 * settings.entryStreak)
        now = plan.deadline! + 50_000
        cycles(&policy, count: 2 * settings.entryStreak - 1, bytes: 34, gap: 10_000, from: &now)
        #expect(!policy.isCoalescing)
        cycles(&policy, count: 1, bytes: 34, gap: 10_000, from: &now)
        #expect(policy.isCoalescing)
    }

    @Test func aDeadlineThatPassesWithNothingStopsCoalescingBeforeTheNextWait() {
        var policy = ReadCoalescer()
        var now: UInt64 = 0
        cycles(&policy, count: 4, bytes: 34, gap: 10_000, from: &now)
        let plan = policy.willWait(now: now)
        // The reactor woke the reader at the deadline and the read found nothing: the next wait
        // must be an ordinary one, or a quiet socket would be polled every 100 µs for ever.
        #expect(policy.willWait(now: plan.deadline!) == .init(lowWatermark: 1, deadline: nil))
        #expect(!policy.isCoalescing)
    }

    @Test func aWaitThatBringsSeveralReadsByItsDeadlineKeepsThePace() {
        var policy = ReadCoalescer()
        var now: UInt64 = 0
        cycles(&policy, count: 4, bytes: 34, gap: 10_000, from: &now)
        for _ in 0..<100 {
            let plan = policy.willWait(now: now)
            #expect(plan.deadline == now + settings.maximumDelay)
            // Five messages came within the delay: below the mark, but worth waiting for.
            policy.didRead(count: 5 * 34, now: plan.deadline!)
            #expect(policy.isCoalescing)
            now = plan.deadline! + 2_000
        }
        // One message in a whole delay is not: the stream thinned out.
        let plan = policy.willWait(now: now)
        policy.didRead(count: 34, now: plan.deadline!)
        #expect(!policy.isCoalescing)
    }

    @Test func aFilledWaitKeepsCoalescingAndForgivesEarlierMistakes() {
        var policy = ReadCoalescer()
        var now: UInt64 = 0
        cycles(&policy, count: 4, bytes: 34, gap: 10_000, from: &now)
        var plan = policy.willWait(now: now)
        policy.didRead(count: 10, now: plan.deadline!)
        #expect(policy.requiredStreak == 8)
        now = plan.deadline! + 1_000
        cycles(&policy, count: 8, bytes: 34, gap: 10_000, from: &now)
        plan = policy.willWait(now: now)
        policy.didRead(count: plan.lowWatermark + 100, now: now + 60_000)
        #expect(policy.isCoalescing)
        #expect(policy.requiredStreak == settings.entryStreak)
    }

    @Test func theDisabledSettingsNeverCoalesce() {
        var policy = ReadCoalescer(settings: .disabled)
        var now: UInt64 = 0
        cycles(&policy, count: 10_000, bytes: 1, gap: 1, from: &now)
        #expect(!policy.isCoalescing)
    }

    /// Whatever the sequence of waits and reads, a wait that asks for more than one byte has a
    /// deadline at most `maximumDelay` after that wait began, and a wait without a deadline asks for one byte.
    @Test func noPlannedWaitCanOutlastTheDelay() {
        var generator = SplitMix64(seed: 0x5EED)
        for _ in 0..<200 {
            var policy = ReadCoalescer()
            var now: UInt64 = UInt64(generator.next() % 1_000_000)
            var waitBegan: UInt64?
            for _ in 0..<500 {
                now += generator.next() % 200_000
                if generator.next() % 3 == 0 {
                    let bytes = Int(generator.next() % 4_000) + 1
                    policy.didRead(count: bytes, now: now)
                    waitBegan = nil
                } else {
                    let plan = policy.willWait(now: now)
                    if waitBegan == nil || plan.deadline == nil { waitBegan = now }
                    if let deadline = plan.deadline {
                        #expect(plan.lowWatermark > 1)
                        #expect(deadline <= waitBegan! + policy.settings.maximumDelay)
                        #expect(deadline > now)
                    } else {
                        #expect(plan.lowWatermark == 1)
                    }
                }
            }
        }
    }
}
