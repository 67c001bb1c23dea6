import Foundation
import Testing
import TidingsCore
import TidingsSandbox

@testable import TidingsOpenMates

/// A prefetcher on a TestClock against the sandbox's prefetch endpoint in process.
final class PrefetchHarness: Sendable {
    static let path = OpenMatesPrefetchRequest.path
    static let allowed = OpenMatesPrefetchConditions(isOnline: true)

    let server: OpenMatesSandboxServer
    let endpoint: OpenMatesSandboxPrefetchEndpoint
    let store: OpenMatesStore
    let clock: TestClock
    let prefetcher: OpenMatesPrefetcher
    let events: EventLog

    init(
        server: OpenMatesSandboxServer = OpenMatesSandboxServer(), store: OpenMatesStore? = nil,
        clock: TestClock = TestClock(),
        configuration: OpenMatesPrefetcher.Configuration = .init(
            requestTimeout: .seconds(3600)),
        conditions: OpenMatesPrefetchConditions = PrefetchHarness.allowed, token: String? = nil
    ) throws {
        self.server = server
        self.clock = clock
        endpoint = OpenMatesSandboxPrefetchEndpoint(server: server, clock: clock)
        self.store = try store ?? OpenMatesStore.inMemory()
        prefetcher = OpenMatesPrefetcher(
            configuration: configuration, transport: endpoint.inProcessTransport(refreshToken: token ?? server.token),
            store: self.store, clock: clock, conditions: conditions)
        events = EventLog(prefetcher.events(bufferingLimit: 10_000))
    }

    /// Steps the clock from deadline to deadline (never to a request's far deadline) until `condition` holds.
    @discardableResult
    func drive(_ condition: () async throws -> Bool) async rethrows -> Bool {
        for _ in 0..<400_000 {
            if try await condition() { return true }
            if Task.isCancelled { return false }
            if let next = clock.earliestPendingDeadline, next < clock.now.advanced(by: .seconds(600)) {
                await clock.advance(to: next)
            } else {
                await Task.yield()
            }
        }
        return try await condition()
    }

    func state() async -> OpenMatesPrefetcher.State { await prefetcher.state }
    func servedCursors() -> [Int?] { endpoint.served.map(\.cursor) }
    func storedChatIDs() throws -> Set<String> { Set(try store.chatList().map(\.chatID)) }
}

/// Collects a subscription's elements in the background.
final class EventLog: Sendable {
    private let state = LockedState<[OpenMatesPrefetcher.Event]>([])
    private let task: Task<Void, Never>

    init(_ subscription: ChangeSubscription<OpenMatesPrefetcher.Event>) {
        let state = self.state
        task = Task {
            for await event in subscription { state.withLock { $0.append(event) } }
        }
    }

    deinit { task.cancel() }

    var all: [OpenMatesPrefetcher.Event] { state.withLock { $0 } }
    var pages: [(cursor: Int, next: Int?, plan: OpenMatesPrefetchPlanner.Plan)] {
        all.compactMap {
            if case .pageStored(let cursor, let next, let plan) = $0 { return (cursor, next, plan) }
            return nil
        }
    }
}

/// Chats `chat-000` … newest first, so offsets are easy to read: offset n is `chat-00n` when there are no
/// sub-chats.
func seededServer(parents: Int, messagesEach: Int = 3, subChatsOfNewest: Int = 0) async -> OpenMatesSandboxServer {
    let server = OpenMatesSandboxServer()
    await server.seed(parents: parents, messagesEach: messagesEach, subChatsOfNewest: subChatsOfNewest)
    return server
}

func chatID(_ index: Int) -> String { String(format: "chat-%03d", index) }
