import PeerSupport
import Testing

@testable import TidingsCore

/// Collects events from concurrent tasks in the order they happen.
actor EventLog {
    private(set) var events: [String] = []
    func append(_ event: String) { events.append(event) }
}

@Suite(.timeLimit(.minutes(1))) struct ClockTests {
    @Test func sleeperWakesOnlyWhenItsDeadlineIsReached() async throws {
        let clock = TestClock()
        let log = EventLog()
        let task = Task {
            try await clock.sleep(for: .seconds(10))
            await log.append("woke at \(clock.now.offset)")
        }
        #expect(await clock.waitForSleepers(1))
        await clock.advance(by: .seconds(9))
        #expect(await log.events.isEmpty)
        #expect(clock.pendingSleepers == 1)
        await clock.advance(by: .seconds(1))
        try await task.value
        #expect(await log.events == ["woke at 10.0 seconds"])
        #expect(clock.pendingSleepers == 0)
        #expect(clock.now.offset == .seconds(10))
    }

    @Test func sleepersWakeInDeadlineOrderThenRegistrationOrder() async throws {
        let clock = TestClock()
        let log = EventLog()
        var tasks: [Task<Void, any Error>] = []
        // Registered one at a time so that registration order is known.
        for (name, seconds) in [("c", 30), ("a", 10), ("b1", 20), ("b2", 20)] {
            tasks.append(
                Task {
                    try await clock.sleep(until: .init(offset: .seconds(seconds)))
                    await log.append("\(name)@\(clock.now.offset.components.seconds)")
                })
            #expect(await clock.waitForSleepers(tasks.count))
        }
        await clock.advance(by: .seconds(60))
        for task in tasks { try await task.value }
        #expect(await log.events == ["a@10", "b1@20", "b2@20", "c@30"])
        #expect(clock.now.offset == .seconds(60))
    }

    @Test func cancellingASleeperThrowsPromptlyWithoutAdvancing() async {
        let clock = TestClock()
        let task = Task { try await clock.sleep(for: .seconds(3600)) }
        #expect(await clock.waitForSleepers(1))
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(clock.pendingSleepers == 0)
        #expect(clock.now.offset == .zero)
    }

    @Test func cancelledTaskDoesNotSleepAtAll() async {
        let clock = TestClock()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(for: .seconds(1))
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(clock.pendingSleepers == 0)
    }

    @Test func pastDeadlineReturnsAtOnce() async throws {
        let clock = TestClock()
        await clock.advance(by: .seconds(5))
        try await clock.sleep(until: .init(offset: .seconds(2)))
        try await clock.sleep(for: .zero)
        #expect(clock.now.offset == .seconds(5))
    }

    @Test func advanceNeverMovesBackwards() async {
        let clock = TestClock()
        await clock.advance(to: .init(offset: .seconds(10)))
        await clock.advance(to: .init(offset: .seconds(3)))
        await clock.advance(by: .seconds(-4))
        #expect(clock.now.offset == .seconds(10))
    }

    @Test func advanceLetsWokenTasksScheduleAgainWithinTheWindow() async throws {
        let clock = TestClock()
        let log = EventLog()
        let task = Task {
            for tick in 1...5 {
                try await clock.sleep(for: .seconds(60))
                await log.append("tick \(tick) at \(clock.now.offset.components.seconds)")
            }
        }
        #expect(await clock.waitForSleepers(1))
        await clock.advance(by: .seconds(180))
        #expect(await log.events == ["tick 1 at 60", "tick 2 at 120", "tick 3 at 180"])
        try await clock.run(until: task)
        #expect(await log.events.count == 5)
        #expect(clock.now.offset == .seconds(300))
        #expect(clock.pendingSleepers == 0)
    }

    @Test func runStopsAfterMaxStepsForEndlessSchedules() async {
        let clock = TestClock()
        let task = Task {
            while true { try await clock.sleep(for: .seconds(1)) }
        }
        #expect(await clock.waitForSleepers(1))
        await clock.run(maxSteps: 10)
        #expect(clock.now.offset == .seconds(10))
        task.cancel()
        _ = await task.result
        #expect(clock.pendingSleepers == 0)
    }

    @Test func immediateClockAdvancesWithoutWaiting() async throws {
        let clock = ImmediateClock()
        let start = clock.now
        for _ in 0..<24 { try await clock.sleep(for: .seconds(3600)) }
        #expect(start.duration(to: clock.now) == .seconds(86_400))
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(for: .seconds(1))
        }
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    @Test func durationHelpers() {
        #expect(Duration.milliseconds(1500).inSeconds == 1.5)
        #expect(Duration.clampedSeconds(2.5) == .milliseconds(2500))
        #expect(Duration.clampedSeconds(-1) == .zero)
        #expect(Duration.clampedSeconds(.nan) == .zero)
        #expect(Duration.clampedSeconds(-.infinity) == .zero)
        #expect(Duration.clampedSeconds(.infinity) == Duration.clampedSeconds(1e300))
        #expect(Duration.clampedSeconds(1e300) > .seconds(1e9))
    }
}

@Suite(.timeLimit(.minutes(1))) struct ClockUnimplementedTests {
    @Test func anySleepFailsWithTheRequestedDuration() async {
        let clock = UnimplementedClock()
        let error = await #expect(throws: UnimplementedClock.UnexpectedSleep.unexpectedSleep) {
            try await clock.sleep(for: .seconds(3))
        }
        #expect(error?.requested == .seconds(3))
        let timeline = Timeline(clock)
        await #expect(throws: UnimplementedClock.UnexpectedSleep.self) { try await timeline.sleep(for: .seconds(1)) }
        #expect(clock.sleepAttempts == 2)
        #expect(clock.now.offset == .zero)
    }

    @Test func timelineMeasuresElapsedTimeOnAnyClock() async throws {
        let clock = TestClock()
        await clock.advance(by: .seconds(100))
        let timeline = Timeline(clock)
        #expect(timeline.elapsed == .zero)
        let task = Task { try await timeline.sleep(until: .seconds(30)) }
        #expect(await clock.waitForSleepers(1))
        await clock.advance(by: .seconds(30))
        try await task.value
        #expect(timeline.elapsed == .seconds(30))
        #expect(clock.now.offset == .seconds(130))
    }
}

@Suite(.timeLimit(.minutes(1))) struct ClockStressTests {
    @Test func runUntilFollowsATaskThroughItsSleepsAndActorHops() async throws {
        let clock = TestClock(yieldsPerStep: 1)
        let log = EventLog()
        let task = Task {
            var total = 0
            for step in 1...20 {
                // Hops to another actor between sleeps: `run(until:)` must not give up in between.
                for _ in 0..<5 { await log.append("step \(step)") }
                try await clock.sleep(for: .seconds(step))
                total += step
            }
            return total
        }
        #expect(try await clock.run(until: task) == 210)
        #expect(clock.now.offset == .seconds(210))
        #expect(await log.events.count == 100)
    }

    @Test func runUntilCancelsATaskThatNeverFinishes() async {
        let clock = TestClock()
        let task = Task {
            while true { try await clock.sleep(for: .seconds(1)) }
        }
        await #expect(throws: CancellationError.self) { try await clock.run(until: task, maxSteps: 5) }
        #expect(clock.now.offset == .seconds(5))
    }

    @Test func manyConcurrentSleepersWakeInDeadlineOrderAtTheirDeadline() async throws {
        let clock = TestClock()
        let log = EventLog()
        var generator = SplitMix64(seed: 99)
        let deadlines = (0..<200).map { _ in Int.random(in: 1...50, using: &generator) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for deadline in deadlines {
                group.addTask {
                    try await clock.sleep(until: .init(offset: .seconds(deadline)))
                    // Record the deadline and the clock's time at wake-up; they must be equal.
                    await log.append("\(deadline) \(clock.now.offset.components.seconds)")
                }
            }
            #expect(await clock.waitForSleepers(200))
            await clock.run()
            try await group.waitForAll()
        }
        let events = await log.events.map { $0.split(separator: " ").compactMap { Int($0) } }
        #expect(events.count == 200)
        #expect(events.allSatisfy { $0.count == 2 && $0[0] == $0[1] }, "each woke exactly at its deadline")
        #expect(events.map { $0[0] } == deadlines.sorted(), "wake-ups in deadline order")
    }
}
