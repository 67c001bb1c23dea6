import Foundation
import TidingsCore
import TidingsOpenMates

/// What one prefetch pass fetched, for `tidings openmates sync --prefetch` and the demo.
struct OpenMatesPrefetchSummary: Sendable {
    /// Pages stored.
    var chunks = 0
    /// Chats whose content a page stored.
    var chats = 0
    /// Messages those pages stored.
    var messages = 0
    /// The cursor each stored page was asked from, then where the next one starts (nil: done).
    var steps: [(cursor: Int, next: Int?)] = []
    /// How the pass ended.
    var state: OpenMatesPrefetcher.State = .idle

    /// Whether the pass ended as it should: the server said done, or the stored-message cap stopped it.
    var succeeded: Bool {
        switch state {
        case .finished, .capReached: true
        default: false
        }
    }

    /// `finished`, `failed: …`, `blocked: …`, `cap reached at N messages`, or `still running` (timed out).
    var stateText: String {
        switch state {
        case .finished: "finished"
        case .failed(let error): "failed: \(error)"
        case .blocked(let block): "blocked: \(block)"
        case .capReached(let stored): "cap reached at \(stored) messages"
        case .idle, .running: "still running"
        case .loggedOut: "logged out"
        }
    }

    /// `cursor 10 → 13 → 16 → done`.
    var cursorText: String {
        guard let first = steps.first else { return "no page" }
        return "cursor "
            + ([String(first.cursor)] + steps.map { $0.next.map(String.init) ?? "done" })
            .joined(separator: " → ")
    }

    var json: [String: Any] {
        [
            "chunks": chunks, "chats": chats, "messages": messages, "state": stateText,
            "cursors": steps.map(\.cursor), "done": state == .finished,
        ]
    }
}

/// Runs one prefetch pass to its end (done, a failure, a block or the cap) or until `timeout` of real time,
/// calling `onPage` for each stored page. On a `TestClock` (the sandbox in process) the pass's 2 s spacing
/// and the sandbox's rate window run on that virtual clock, which this steps from deadline to deadline; its
/// request deadlines are to be far (hours) so that stepping never expires a request answered in process.
func runOpenMatesPrefetchPass(
    _ prefetcher: OpenMatesPrefetcher, virtualClock: TestClock?, timeout: Duration,
    onPage: @escaping @Sendable (Int, Int?, OpenMatesPrefetchPlanner.Plan) -> Void = { _, _, _ in }
) async -> OpenMatesPrefetchSummary {
    let progress = LockedState(OpenMatesPrefetchSummary())
    let events = prefetcher.events(bufferingLimit: 10_000)
    let driver = virtualClock.map { clock in
        Task {
            while !Task.isCancelled {
                if let next = clock.earliestPendingDeadline, next < clock.now.advanced(by: .seconds(600)) {
                    await clock.advance(to: next)
                } else {
                    try? await Task.sleep(for: .milliseconds(1))
                }
            }
        }
    }
    await prefetcher.start()
    await withTaskGroup(of: Void.self) { group in
        group.addTask {
            for await event in events {
                switch event {
                case .pageStored(let cursor, let next, let plan):
                    progress.withLock { $0.record(cursor: cursor, next: next, plan: plan) }
                    onPage(cursor, next, plan)
                case .state(let state):
                    progress.withLock { $0.state = state }
                    switch state {
                    case .finished, .failed, .blocked, .capReached, .loggedOut: return
                    case .idle, .running: break
                    }
                case .rateLimited, .lagged: break
                }
            }
        }
        group.addTask { try? await Task.sleep(for: timeout) }
        await group.next()
        group.cancelAll()
    }
    driver?.cancel()
    await prefetcher.stop()
    return progress.withLock { $0 }
}

extension OpenMatesPrefetchSummary {
    /// Counts one stored page: its chats with content and the messages it stored.
    mutating func record(cursor: Int, next: Int?, plan: OpenMatesPrefetchPlanner.Plan) {
        chunks += 1
        chats += plan.contentStored.count
        messages += plan.changes.reduce(0) { count, change in
            switch change {
            case .replaceContent(_, let messages, _, _, _, _), .mergeMessages(_, let messages, _, _, _):
                count + messages.count
            default: count
            }
        }
        steps.append((cursor, next))
    }
}
