import Foundation
import Testing
import TidingsCore
import TidingsSandbox
import TidingsYpChat

/// A clock whose time jumps only when the test says so, and whose sleepers wake at the jump — as an app
/// suspended in the background wakes once, long after its timer's deadline. (`TestClock` wakes each
/// sleeper exactly at its deadline, so it cannot show a late wake-up.)
final class JumpingClock: Clock, Sendable {
    typealias Duration = Swift.Duration
    typealias Instant = ContinuousClock.Instant

    private struct State {
        var offset = Duration.zero
        var sleepers: [(id: UUID, deadline: Instant, continuation: CheckedContinuation<Void, any Error>)] = []
    }
    private let base = ContinuousClock.now
    private let state = LockedState(State())

    var now: Instant { base.advanced(by: state.withLock { $0.offset }) }
    var minimumResolution: Duration { .zero }
    var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try Task.checkCancellation()
        if deadline <= now { return }
        let id = UUID()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let cancelled = state.withLock { state in
                    if Task.isCancelled { return true }
                    state.sleepers.append((id, deadline, continuation))
                    return false
                }
                if cancelled { continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            let sleeper = state.withLock { state in
                let found = state.sleepers.first { $0.id == id }
                state.sleepers.removeAll { $0.id == id }
                return found
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward by `duration` and wakes every sleeper whose deadline has passed.
    func jump(by duration: Duration) {
        let woken = state.withLock { state in
            state.offset += duration
            let now = base.advanced(by: state.offset)
            let due = state.sleepers.filter { $0.deadline <= now }
            state.sleepers.removeAll { $0.deadline <= now }
            return due.map(\.continuation)
        }
        for continuation in woken { continuation.resume() }
    }

    /// Yields until a task sleeps on the clock.
    func waitForSleeper() async {
        while sleeperCount == 0 { await Task.yield() }
    }
}

@Suite(.timeLimit(.minutes(1))) struct YpChatBackgroundTimeoutTests {
    @Test func aTickAfterASuspensionCountsEverySecondThatPassed() async throws {
        let server = YpChatSandboxServer()
        let clock = JumpingClock()
        let anna = YpChatRepository(
            rest: try server.inProcessRESTClient(),
            socket: { YpChatSocketClient(rest: $0, connector: server.inProcessConnector()) }, clock: clock)
        await anna.login(ChatProfile(userName: "anna", gender: "w", age: 30, country: "DE"))
        try await until(anna) { $0.isLoggedIn }
        await clock.waitForSleeper()
        // Ten minutes in the background: the ticker wakes once and counts all 600 seconds.
        clock.jump(by: .seconds(600))
        try await until(anna) { $0.timeoutRemaining == 1_200 }
        await clock.waitForSleeper()
        clock.jump(by: .seconds(1_300))  // past the deadline while suspended
        let state = try await until(anna) { !$0.isLoggedIn }
        #expect(state.errorMessage == .key(.timeoutLoggedOut))
        await anna.close()
    }
}
