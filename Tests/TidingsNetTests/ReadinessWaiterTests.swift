import Testing
import TidingsCore

@testable import TidingsNet

/// The one waiter both socket channels use (epoll edges on Linux, dispatch sources elsewhere), driven
/// here by hand: no socket, no reactor.
@Suite(.timeLimit(.minutes(1))) struct ReadinessWaiterTests {
    /// Records what the waiter tells its source, in order.
    struct RecordingSource: ReadinessSource {
        let log: LockedState<[String]>
        func waiterParked() { log.withLock { $0.append("parked") } }
        func signalled() { log.withLock { $0.append("signalled") } }
        func cancelled() { log.withLock { $0.append("cancelled") } }
    }

    private func makeWaiter() -> (ReadinessWaiter<RecordingSource>, LockedState<[String]>) {
        let log = LockedState<[String]>([])
        return (ReadinessWaiter(operation: "read", source: RecordingSource(log: log)), log)
    }

    /// Yields until the waiter has parked a task (no sleeping: the parked event is what is awaited).
    private func untilParked(_ log: LockedState<[String]>, count: Int = 1) async {
        while log.withLock({ $0.filter { $0 == "parked" }.count }) < count { await Task.yield() }
    }

    @Test func aSignalWithNobodyWaitingIsKeptForTheNextWait() async throws {
        let (waiter, log) = makeWaiter()
        waiter.signal()
        try await waiter.wait()
        #expect(log.withLock { $0 } == ["signalled"])
    }

    @Test func aParkedWaitIsResumedBySignalAndTheSourceHearsBoth() async throws {
        let (waiter, log) = makeWaiter()
        let waiting = Task { try await waiter.wait() }
        await untilParked(log)
        waiter.signal()
        try await waiting.value
        #expect(log.withLock { $0 } == ["parked", "signalled"])
        // The signal was consumed: the next wait parks again.
        let next = Task { try await waiter.wait() }
        await untilParked(log, count: 2)
        waiter.signal()
        try await next.value
    }

    @Test func theFirstCancellationDecidesTheErrorOfThisAndEveryLaterWait() async throws {
        let (waiter, log) = makeWaiter()
        let reactorFailure = TransportError(kind: .system, operation: "poll", code: 9, detail: "failed")
        let waiting = Task { try await waiter.wait() }
        await untilParked(log)
        waiter.cancel(with: reactorFailure)
        waiter.cancel()
        for outcome in [await waiting.result, await Result { try await waiter.wait() }] {
            #expect(throws: TransportError.system) { try outcome.get() }
            if case .failure(let error as TransportError) = outcome { #expect(error.errno == 9) }
        }
        #expect(log.withLock { $0 } == ["parked", "cancelled"])
    }

    @Test func aSecondConcurrentWaitIsRefused() async throws {
        let (waiter, log) = makeWaiter()
        let waiting = Task { try await waiter.wait() }
        await untilParked(log)
        await #expect(throws: TransportError.concurrentRead) { try await waiter.wait() }
        waiter.signal()
        try await waiting.value
    }

    @Test func cancellingTheWaitingTaskThrowsAndLeavesTheWaiterUsable() async throws {
        let (waiter, log) = makeWaiter()
        let waiting = Task { try await waiter.wait() }
        await untilParked(log)
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        waiter.signal()
        try await waiter.wait()
    }
}

extension Result where Failure == any Error {
    /// The outcome of an async throwing call, for comparing it with others.
    fileprivate init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
