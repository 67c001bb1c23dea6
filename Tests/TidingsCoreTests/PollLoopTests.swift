import Foundation
import Testing

@testable import TidingsCore

/// The generic poll loop on the virtual clock, and its rate-budget gate.
@Suite(.timeLimit(.minutes(1))) struct PollLoopTests {
    /// Tick start times, recorded by the tick closure.
    final class Ticks: Sendable {
        private let state = LockedState([Double]())
        func append(_ second: Double) { state.withLock { $0.append(second) } }
        var seconds: [Double] { state.withLock { $0 } }
    }

    @Test func ticksEveryIntervalAndARequestDuringATickBecomesOneMoreTick() async {
        let clock = TestClock()
        let ticks = Ticks()
        let loop = PollLoop(clock: clock, schedule: { .every(.seconds(30)) }) {
            ticks.append(clock.now.offset.inSeconds)
            try? await clock.sleep(for: .seconds(10))  // each tick takes 10 s
            return .success
        }
        let task = Task { await loop.run() }
        #expect(await PollLoopDriver.settle([loop], clock: clock))
        for _ in 0..<3 { await loop.requestTick() }  // while the first tick runs
        await PollLoopDriver.run([loop], clock: clock, until: VirtualInstant(offset: .seconds(75)))
        #expect(ticks.seconds == [0, 10, 40, 70], "three requests in flight → one tick at 10 s")
        task.cancel()
        #expect(await PollLoopDriver.settle([loop], clock: clock))
        #expect(await loop.state == .finished)
    }

    @Test func theBudgetGateHoldsTicksAtTheReserveUntilTheServersReset() async {
        let fixture = BudgetFixture()
        let gate = PollBudgetGate(budget: fixture.budget, host: "social.example", account: "a", reserve: 10)
        #expect(await gate.pause() == .zero)
        let reset = ISO8601DateFormatter().string(from: fixture.wallNow.addingTimeInterval(120))
        await fixture.budget.record(
            RateLimitSignal(statusCode: 200, limit: "300", remaining: "10", reset: reset), host: "social.example",
            account: "a")
        #expect(await gate.pause() == .seconds(120))
        let status = await fixture.budget.status(host: "social.example", account: "a")
        #expect(status.serverRemaining == 10)
        #expect(status.serverResetIn == .seconds(120))
        await fixture.budget.record(
            RateLimitSignal(statusCode: 200, limit: "300", remaining: "11", reset: reset), host: "social.example",
            account: "a")
        #expect(await gate.pause() == .zero, "above the reserve")
        await fixture.budget.record(
            RateLimitSignal(statusCode: 200, limit: "300", remaining: "3", reset: reset), host: "social.example",
            account: "a")
        await fixture.clock.advance(by: .seconds(120))
        #expect(await gate.pause() == .zero, "the window has reset")
        #expect(await fixture.budget.status(host: "social.example", account: "a").serverRemaining == nil)
    }

    @Test func aGatedLoopWaitsForTheResetAndOfflineWaitsForThePathNotATimer() async {
        let fixture = BudgetFixture()
        let clock = fixture.clock
        let ticks = Ticks()
        let gate = PollBudgetGate(budget: fixture.budget, host: "social.example", account: "a", reserve: 5)
        let reset = ISO8601DateFormatter().string(from: fixture.wallNow.addingTimeInterval(200))
        await fixture.budget.record(
            RateLimitSignal(statusCode: 200, remaining: "2", reset: reset), host: "social.example", account: "a")
        let loop = PollLoop(clock: clock, gate: gate, schedule: { .every(.seconds(30)) }) {
            ticks.append(clock.now.offset.inSeconds)
            return .success
        }
        let task = Task { await loop.run() }
        await PollLoopDriver.run([loop], clock: clock, until: VirtualInstant(offset: .seconds(260)))
        #expect(ticks.seconds == [200, 230, 260])
        await loop.setNetworkSatisfied(false)
        await PollLoopDriver.settle([loop], clock: clock)
        #expect(clock.pendingSleepers == 0)
        #expect(await loop.state == .waiting(until: nil, reason: .offline))
        await clock.advance(by: .seconds(3600))
        await loop.setNetworkSatisfied(true)
        await PollLoopDriver.settle([loop], clock: clock)
        #expect(ticks.seconds == [200, 230, 260, 3860])
        task.cancel()
    }
}
