/// Driving several ``PollLoop``s on one ``TestClock`` deadline by deadline, for tests and benchmarks of
/// the package (not public API).
///
/// `TestClock.advance` waits only until a woken task resumes, not until the tick it then runs has
/// finished; moving the clock on before that would run the tick late. So between two deadlines the
/// driver waits until every loop is *settled*: waiting on its current state (asleep on the clock when
/// it waits for a time), or ticking with its tick asleep on the clock (a request waiting for its rate
/// budget), and the clock has exactly that many sleepers (plus `extraSleepers` the caller knows of).
package enum PollLoopDriver {
    /// Yields until the loops are settled; `false` if they were not within `maxYields`.
    @discardableResult
    package static func settle(
        _ loops: [PollLoop], clock: TestClock, extraSleepers: Int = 0, maxYields: Int = 1_000_000
    ) async -> Bool {
        for attempt in 0..<maxYields {
            if let expected = await sleepers(of: loops), clock.pendingSleepers == expected + extraSleepers {
                return true
            }
            await pause(after: attempt)
        }
        return false
    }

    /// How many sleepers the loops account for when each is settled (one per timed wait, one per tick
    /// asleep on the clock), or `nil` while one of them is still deciding.
    package static func sleepers(of loops: [PollLoop]) async -> Int? {
        var expected = 0
        for loop in loops {
            switch await loop.state {
            case .ticking:
                expected += 1
            case .waiting(let until, _):
                guard await loop.isWaitingOnCurrentState else { return nil }
                if until != nil { expected += 1 }
            case .notStarted:
                return nil
            case .finished:
                break
            }
        }
        return expected
    }

    /// Yields; after the first few attempts, also gives the cores away for 100 µs, so a long wait on a
    /// busy 2-core machine does not keep both pool threads spinning while others need them. Nothing
    /// depends on how long this takes: the condition is checked again either way.
    package static func pause(after attempt: Int) async {
        if attempt < 64 {
            await Task.yield()
        } else {
            try? await Task.sleep(for: .microseconds(100))
        }
    }

    /// Settles the loops, then moves the clock to its earliest deadline if that is not after `limit`,
    /// else to `limit`; settles again.
    package static func step(
        _ loops: [PollLoop], clock: TestClock, to limit: VirtualInstant, extraSleepers: Int = 0
    ) async {
        await settle(loops, clock: clock, extraSleepers: extraSleepers)
        if let deadline = clock.earliestPendingDeadline, deadline <= limit {
            await clock.advance(to: deadline)
        } else {
            await clock.advance(to: limit)
        }
        await settle(loops, clock: clock, extraSleepers: extraSleepers)
    }

    /// Steps deadline by deadline until the clock reaches `limit`.
    package static func run(
        _ loops: [PollLoop], clock: TestClock, until limit: VirtualInstant, extraSleepers: Int = 0
    ) async {
        while clock.now < limit {
            await step(loops, clock: clock, to: limit, extraSleepers: extraSleepers)
        }
    }
}
