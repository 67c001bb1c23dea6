import Foundation
import Testing
import TidingsCore

@testable import TidingsMastodon

@Suite(.timeLimit(.minutes(1))) struct TimelineRefresherTests {
    typealias S = TimelineTestSupport

    /// Counts fetches and holds each one until the test opens the gate.
    final class GatedServer: Sendable {
        private struct State {
            var fetches = 0
            var waiting: [CheckedContinuation<Void, Never>] = []
            var open = false
        }
        private let state = LockedState(State())
        var fetches: Int { state.withLock { $0.fetches } }

        func fetch(_ plan: MastodonTimelineFetchPlan) async -> MastodonTimelinePage {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state -> Bool in
                    state.fetches += 1
                    if state.open { return true }
                    state.waiting.append(continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
            return TimelineTestSupport.page([3, 2, 1])
        }

        func open() {
            let waiting = state.withLock { state in
                state.open = true
                defer { state.waiting = [] }
                return state.waiting
            }
            for continuation in waiting { continuation.resume() }
        }
    }

    @Test func aHundredConcurrentRefreshesMakeOneFetch() async throws {
        let store = try S.store()
        let server = GatedServer()
        let refresher = MastodonTimelineRefresher(store: store) { _, plan in await server.fetch(plan) }
        try await withThrowingTaskGroup(of: MastodonTimelineApplyResult.self) { group in
            for _ in 0..<100 { group.addTask { try await refresher.refresh(S.home) } }
            while await refresher.waitingCallers(S.home) < 100 { await Task.yield() }
            server.open()
            var results: [MastodonTimelineApplyResult] = []
            for try await result in group { results.append(result) }
            #expect(results.count == 100 && results.allSatisfy { $0.inserted == 3 })
        }
        #expect(server.fetches == 1)
        #expect(S.shape(try await store.entries(S.home)) == "3 2 1")
        // Once finished, the next refresh fetches again (anchored on the newest cached status).
        try await refresher.refresh(S.home)
        #expect(server.fetches == 2)
    }

    @Test func differentKeysRefreshIndependently() async throws {
        let store = try S.store()
        let server = GatedServer()
        server.open()
        let refresher = MastodonTimelineRefresher(store: store) { _, plan in await server.fetch(plan) }
        async let first = refresher.refresh(S.home)
        async let second = refresher.refresh(.home(account: "b@example.social"))
        _ = try await (first, second)
        #expect(server.fetches == 2)
    }
}
