import Testing

@testable import TidingsCore

/// An operation that counts its calls and finishes only when the test opens it; once open it stays
/// open, so a caller arriving late can never hang the test.
actor Gate {
    private(set) var calls = 0
    private var waiting: [CheckedContinuation<Void, any Error>] = []
    private var outcome: Result<Void, any Error>?

    func enter() async throws {
        calls += 1
        if let outcome { return try outcome.get() }
        try await withCheckedThrowingContinuation { waiting.append($0) }
    }

    func open(throwing error: (any Error)? = nil) {
        let result: Result<Void, any Error> = error.map { .failure($0) } ?? .success(())
        outcome = result
        for continuation in waiting { continuation.resume(with: result) }
        waiting.removeAll()
    }

    var waiterCount: Int { waiting.count }
}

struct Boom: Error, Equatable {}

@Suite(.timeLimit(.minutes(1))) struct SingleFlightTests {
    /// Yields until `condition` holds (bounded), so the test never depends on wall-clock time.
    static func until(_ condition: () async -> Bool) async -> Bool {
        for _ in 0..<10_000 {
            if await condition() { return true }
            await Task.yield()
        }
        return await condition()
    }

    @Test func concurrentCallersShareOneOperationAndItsValue() async throws {
        let group = SingleFlight<String, Int>()
        let gate = Gate()
        let callers = (0..<10).map { _ in
            Task {
                try await group.run(key: "home") {
                    try await gate.enter()
                    return 42
                }
            }
        }
        #expect(await Self.until { await group.callerCount(key: "home") == 10 })
        // The shared operation runs in a task of its own: joining callers can be counted before it reaches
        // the gate, so wait for it there (one operation, one waiter; `calls` below catches a second one).
        #expect(await Self.until { await gate.waiterCount == 1 })
        #expect(await group.inFlightCount == 1)
        await gate.open()
        for caller in callers { #expect(try await caller.value == 42) }
        #expect(await gate.calls == 1)
        #expect(await group.inFlightCount == 0)
    }

    @Test func concurrentCallersShareTheError() async {
        let group = SingleFlight<String, Int>()
        let gate = Gate()
        let callers = (0..<5).map { _ in
            Task {
                try await group.run(key: "k") {
                    try await gate.enter()
                    return 1
                }
            }
        }
        #expect(await Self.until { await group.callerCount(key: "k") == 5 })
        await gate.open(throwing: Boom())
        for caller in callers {
            await #expect(throws: Boom.self) { try await caller.value }
        }
        #expect(await gate.calls == 1)
    }

    @Test func differentKeysRunSeparately() async throws {
        let group = SingleFlight<Int, Int>()
        async let a = group.run(key: 1) { 10 }
        async let b = group.run(key: 2) { 20 }
        #expect(try await [a, b] == [10, 20])
    }

    @Test func laterCallAfterCompletionStartsANewOperation() async throws {
        let group = SingleFlight<String, Int>()
        let counter = Gate()
        for expected in 1...3 {
            let value = try await group.run(key: "k") {
                await counter.count()
            }
            #expect(value == expected)
        }
    }

    @Test func cancelledCallerLeavesPromptlyOthersStillGetTheValue() async throws {
        let group = SingleFlight<String, Int>()
        let gate = Gate()
        let operation: @Sendable () async throws -> Int = {
            try await gate.enter()
            return 7
        }
        let leaving = Task { try await group.run(key: "k", operation: operation) }
        #expect(await Self.until { await gate.waiterCount == 1 })
        let staying = Task { try await group.run(key: "k", operation: operation) }
        #expect(await Self.until { await group.callerCount(key: "k") == 2 })
        leaving.cancel()
        await #expect(throws: CancellationError.self) { try await leaving.value }
        #expect(await group.inFlightCount == 1, "the operation survives for the remaining caller")
        #expect(await group.callerCount(key: "k") == 1)
        await gate.open()
        #expect(try await staying.value == 7)
        #expect(await gate.calls == 1)
    }

    @Test func operationIsCancelledWhenEveryCallerLeaves() async throws {
        let group = SingleFlight<String, Int>()
        let started = Gate()
        let sawCancellation = Flag()
        let caller = Task {
            try await group.run(key: "k") {
                await started.count()
                while !Task.isCancelled { await Task.yield() }
                await sawCancellation.set()
                throw CancellationError()
            }
        }
        #expect(await Self.until { await started.calls == 1 })
        caller.cancel()
        await #expect(throws: CancellationError.self) { try await caller.value }
        #expect(await Self.until { await sawCancellation.value })
        #expect(await group.inFlightCount == 0)
        // A new call starts afresh.
        #expect(try await group.run(key: "k") { 3 } == 3)
    }
}

extension Gate {
    /// Counts a call that does not wait; returns the number of calls so far.
    @discardableResult
    func count() -> Int {
        calls += 1
        return calls
    }
}
