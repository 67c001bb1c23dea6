import Foundation
import Testing
import TidingsCore
import TidingsNet

/// The request/response layer on a virtual clock: every outcome a waiting request can have, each
/// exactly once, and IDs that never collide with a pending request.
@Suite(.timeLimit(.minutes(1))) struct RequestCorrelatorTests {
    struct Reply: CorrelatedResponse, Equatable {
        var id: String?
        var text: String
        var correlationID: String? { id }
    }

    /// Starts a request whose send records its ID; returns the task and the ID once sent.
    func start(
        _ requests: RequestCorrelator<Reply>, timeout: Duration = .seconds(5)
    ) async -> (Task<Result<Reply, MessagingError>, Never>, RequestID) {
        let sent = LockedState<RequestID?>(nil)
        let task = Task {
            await requests.request(timeout: timeout) { id in sent.withLock { $0 = id } }
        }
        while sent.withLock({ $0 }) == nil { await Task.yield() }
        return (task, sent.withLock { $0! })
    }

    @Test func aResponseAnswersItsRequestAndStopsItsTimer() async throws {
        let clock = TestClock()
        let requests = RequestCorrelator<Reply>(clock: clock)
        let (task, id) = await start(requests)
        #expect(await clock.waitForSleepers(1))
        #expect(requests.resolve(id, with: Reply(id: id.description, text: "pong")))
        #expect(try await task.value.get() == Reply(id: id.description, text: "pong"))
        #expect(requests.pendingCount == 0)
        #expect(await eventually { clock.pendingSleepers == 0 })
    }

    @Test func aRequestTimesOutOnTheClockAndALateResponseIsIgnored() async throws {
        let clock = TestClock()
        let requests = RequestCorrelator<Reply>(clock: clock)
        let (task, id) = await start(requests, timeout: .seconds(5))
        #expect(await clock.waitForSleepers(1))
        await clock.advance(by: .seconds(5) - .milliseconds(1))
        #expect(requests.pendingCount == 1)
        await clock.advance(by: .milliseconds(1))
        #expect(await task.value.failure == .timeout)
        #expect(requests.pendingCount == 0)
        #expect(!requests.resolve(id, with: Reply(id: id.description, text: "late")))
    }

    @Test func cancellingTheWaitingTaskEndsItOnceAndRemovesItsEntry() async throws {
        let clock = TestClock()
        let requests = RequestCorrelator<Reply>(clock: clock)
        let (task, id) = await start(requests)
        #expect(await clock.waitForSleepers(1))
        task.cancel()
        #expect(await task.value.failure == .cancelled)
        #expect(requests.pendingCount == 0)
        #expect(!requests.resolve(id, with: Reply(id: id.description, text: "late")))
        #expect(await eventually { clock.pendingSleepers == 0 })
        // A timeout that would have fired later finds nothing to end.
        await clock.advance(by: .seconds(10))
        #expect(requests.pendingCount == 0)
    }

    @Test func connectionLossFailsEveryPendingRequest() async throws {
        let clock = TestClock()
        let requests = RequestCorrelator<Reply>(clock: clock)
        var tasks: [Task<Result<Reply, MessagingError>, Never>] = []
        for _ in 0..<3 { tasks.append(await start(requests).0) }
        #expect(requests.pendingCount == 3)
        requests.failAll(.connectionLost)
        for task in tasks { #expect(await task.value.failure == .connectionLost) }
        #expect(requests.pendingCount == 0)
        #expect(await eventually { clock.pendingSleepers == 0 })
    }

    @Test func aFailedSendFailsTheRequestWithATypedError() async throws {
        let requests = RequestCorrelator<Reply>(clock: TestClock())
        struct SocketGone: Error {}
        let lost = await requests.request(timeout: .seconds(5)) { _ in throw SocketGone() }
        #expect(lost.failure == .connectionLost)
        let offline = await requests.request(timeout: .seconds(5)) { _ in throw MessagingError.notConnected }
        #expect(offline.failure == .notConnected)
        #expect(requests.pendingCount == 0)
    }

    @Test func aResponseArrivingWhileTheSendRunsIsKept() async throws {
        let requests = RequestCorrelator<Reply>(clock: TestClock())
        let outcome = await requests.request(timeout: .seconds(5)) { id in
            // The transport delivered the answer before `send` returned.
            #expect(requests.deliver(Reply(id: id.description, text: "fast")) == .resolved)
        }
        #expect(try outcome.get().text == "fast")
        #expect(requests.pendingCount == 0)
    }

    @Test func deliverSeparatesResponsesStraysAndNotifications() async throws {
        let requests = RequestCorrelator<Reply>(clock: TestClock())
        #expect(requests.deliver(Reply(id: nil, text: "notification")) == .notification)
        #expect(requests.deliver(Reply(id: "42", text: "unknown")) == .unmatched)
        #expect(requests.deliver(Reply(id: "not-ours", text: "foreign")) == .unmatched)
        #expect(RequestID(wire: "007") == nil && RequestID(wire: "7") == RequestID(7))
    }

    @Test func idsIncreaseWrapAndNeverCollideWithAPendingRequest() async throws {
        let requests = RequestCorrelator<Reply>(clock: TestClock(), ids: 1...3)
        let (first, one) = await start(requests)
        let (second, two) = await start(requests)
        let (third, three) = await start(requests)
        #expect([one, two, three].map(\.rawValue) == [1, 2, 3])
        // Every ID is held: a fourth request fails instead of reusing one.
        let refused = await requests.request(timeout: .seconds(5)) { _ in Issue.record("sent without an ID") }
        #expect(refused.failure == .tooManyPending)
        // After the wrap, the only free ID is 2; 1 and 3 are still waiting for their responses.
        requests.resolve(two, with: Reply(id: "2", text: "b"))
        _ = await second.value
        let (fourth, reused) = await start(requests)
        #expect(reused.rawValue == 2)
        requests.resolve(one, with: Reply(id: "1", text: "a"))
        requests.resolve(three, with: Reply(id: "3", text: "c"))
        requests.resolve(reused, with: Reply(id: "2", text: "d"))
        #expect(try await first.value.get().text == "a")
        #expect(try await third.value.get().text == "c")
        #expect(try await fourth.value.get().text == "d")
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
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
