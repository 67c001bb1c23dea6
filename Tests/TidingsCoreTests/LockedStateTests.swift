import Foundation
import PeerSupport
import Testing
import TidingsCore

@Suite(.timeLimit(.minutes(1))) struct LockedStateTests {
    private static let workers = 4
    private static let incrementsEach = 20_000

    @Test func incrementsFromManyThreadsReachTheExactTotal() async throws {
        let counter = LockedState(0)
        // Real threads, not the cooperative pool. Every 64th increment gives up the processor between its
        // read and its write, so without the lock another thread's increments would land in that window and
        // be overwritten; the work stays small, so the test does not starve the other tests' threads.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<Self.workers {
                group.addTask {
                    try await onDedicatedThread("locked-state-\(worker)") {
                        for _ in 0..<Self.incrementsEach {
                            counter.withLock { value in
                                let read = value
                                if read.isMultiple(of: 64) { sched_yield() }
                                value = read + 1
                            }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(counter.withLock { $0 } == Self.workers * Self.incrementsEach)
    }

    @Test func incrementsFromManyTasksReachTheExactTotal() async {
        let state = LockedState((count: 0, seen: Set<Int>()))
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<Self.workers {
                group.addTask {
                    for step in 0..<Self.incrementsEach {
                        let ticket = state.withLock { value -> Int in
                            value.count += 1
                            return value.count
                        }
                        if step.isMultiple(of: 1000) { state.withLock { _ = $0.seen.insert(worker) } }
                        precondition(ticket > 0)
                    }
                }
            }
        }
        let (count, seen) = state.withLock { ($0.count, $0.seen) }
        #expect(count == Self.workers * Self.incrementsEach)
        #expect(seen == Set(0..<Self.workers))
    }

    @Test func aThrowingBodyReleasesTheLockAndKeepsItsChanges() {
        struct Refused: Error, Equatable {}
        let box = LockedState([Int]())
        #expect(throws: Refused()) {
            try box.withLock { (value: inout [Int]) throws(Refused) in
                value.append(1)
                throw Refused()
            }
        }
        // The lock is free again (a held lock would deadlock here) and the change made before the throw stays.
        #expect(box.withLock { $0 } == [1])
    }
}
