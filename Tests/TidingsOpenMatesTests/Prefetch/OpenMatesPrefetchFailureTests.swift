import Foundation
import Testing
import TidingsCore
import TidingsSandbox

@testable import TidingsOpenMates

/// A failed request stores nothing and stops prefetch with a typed error; logout cancels it for good.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesPrefetchFailureTests {
    static func storeSnapshot(_ store: OpenMatesStore) throws -> [String] {
        try store.chatList().map { "\($0.chatID):\($0.versions.messagesV)" } + [
            "messages:\(try store.count(.messages))", "cursor:\(try store.prefetchCursor())",
        ]
    }

    @Test(arguments: ["500", "garbage", "401"])
    func aFailedPageLeavesTheStoreIntactWithATypedError(failure: String) async throws {
        let harness = try PrefetchHarness(server: await seededServer(parents: 20))
        await harness.prefetcher.start()
        #expect(await eventually { harness.events.pages.count == 1 })
        let before = try Self.storeSnapshot(harness.store)
        switch failure {
        case "500": harness.endpoint.faults.add(.status(500), on: .path(PrefetchHarness.path), times: 1)
        case "garbage": harness.endpoint.faults.add(.malformedBody, on: .path(PrefetchHarness.path), times: 1)
        default: harness.endpoint.faults.add(.status(401), on: .path(PrefetchHarness.path), times: 1)
        }
        #expect(await harness.drive { if case .failed = await harness.state() { true } else { false } })
        let state = await harness.state()
        switch failure {
        case "500": #expect(state == .failed(.status))
        case "garbage": #expect(state == .failed(.malformedPage))
        default: #expect(state == .failed(.unauthorized))
        }
        if case .failed(let error) = state, failure != "garbage" { #expect(error.status == Int(failure)) }
        #expect(try Self.storeSnapshot(harness.store) == before)
        // Stopped: no retry on its own.
        await harness.clock.advance(by: .seconds(120))
        #expect(harness.endpoint.log.entries.count == 2)
        // The next trigger retries from the same cursor.
        await harness.prefetcher.start()
        #expect(await harness.drive { await harness.state() == .finished })
        // A fault's answer never reaches the handler; a garbage body is the handler's page, spoiled.
        #expect(harness.servedCursors() == (failure == "garbage" ? [10, 13, 13, 16, 19] : [10, 13, 16, 19]))
        #expect(harness.endpoint.log.entries.count == 5)
    }

    @Test func aHangingServerHitsTheDeadlineAndStoresNothing() async throws {
        let harness = try PrefetchHarness(
            server: await seededServer(parents: 20), configuration: .init(requestTimeout: .seconds(30)))
        harness.endpoint.faults.add(.neverAnswer, on: .path(PrefetchHarness.path), times: 1)
        await harness.prefetcher.start()
        #expect(await harness.clock.waitForSleepers(1))
        await harness.clock.advance(by: .milliseconds(29_999))
        #expect(await harness.state() == .running(cursor: 10))
        await harness.clock.advance(by: .milliseconds(1))
        #expect(await eventually { await harness.state() == .failed(.timedOut) })
        // The hung request was cancelled (the server saw its connection end) and nothing was stored.
        #expect(await eventually { harness.endpoint.log.entries.count == 1 })
        #expect(harness.endpoint.log.entries.first?.status == 0)
        #expect(try harness.store.count(.chats) == 0)
        #expect(try harness.store.prefetchCursor() == 10)
    }

    @Test func aCursorThatDoesNotMoveIsATypedErrorNotALoop() async throws {
        let harness = try PrefetchHarness(server: await seededServer(parents: 20))
        let stalled = StalledTransport()
        let prefetcher = OpenMatesPrefetcher(
            transport: stalled, store: harness.store, clock: harness.clock, conditions: PrefetchHarness.allowed)
        await prefetcher.start()
        #expect(await eventually { await prefetcher.state == .failed(.cursorStalled) })
        #expect(stalled.calls == 1)
        #expect(try harness.store.count(.chats) == 0)
    }

    @Test func logoutCancelsTheRequestInFlightAndNothingRunsAgain() async throws {
        let harness = try PrefetchHarness(server: await seededServer(parents: 20))
        harness.endpoint.faults.add(.neverAnswer, on: .path(PrefetchHarness.path), times: 1)
        await harness.prefetcher.start()
        #expect(await harness.clock.waitForSleepers(1))
        await harness.prefetcher.logout()
        #expect(await harness.state() == .loggedOut)
        #expect(harness.endpoint.log.entries.map(\.status) == [0])
        await harness.prefetcher.start()
        await harness.prefetcher.update(PrefetchHarness.allowed)
        await harness.clock.advance(by: .seconds(120))
        #expect(harness.endpoint.log.entries.count == 1)
        #expect(try harness.store.count(.chats) == 0)
    }

    @Test func theClientsLogoutCancelsPrefetchBeforeTheStoreIsErased() async throws {
        let server = await seededServer(parents: 20)
        let client = try OpenMatesClientHarness(server: server)
        let harness = try PrefetchHarness(server: server, store: client.store, clock: client.clock)
        harness.endpoint.faults.add(.neverAnswer, on: .path(PrefetchHarness.path))
        await harness.prefetcher.attach(to: client.client)
        await client.client.start()
        #expect(await client.untilSynced())
        // The completed phased sync started prefetch; its first request hangs on the server.
        #expect(await eventually { await harness.prefetcher.requestsSent == 1 })
        #expect(try client.store.count(.chats) == 20)
        try await client.client.logout()
        #expect(await harness.state() == .loggedOut)
        #expect(harness.endpoint.log.entries.map(\.status) == [0])
        #expect(try client.store.count(.chats) == 0)
        #expect(try client.store.count(.messages) == 0)
        await harness.clock.advance(by: .seconds(120))
        #expect(try client.store.count(.chats) == 0)
        #expect(harness.endpoint.log.entries.count == 1)
    }
}

/// Answers every request with a page whose `next_cursor` is the cursor asked for.
final class StalledTransport: OpenMatesPrefetchTransport {
    private let count = LockedState(0)
    var host: String { "stalled.example" }
    var calls: Int { count.withLock { $0 } }

    func post(_ request: OpenMatesPrefetchRequest, timeout: Duration) async throws -> OpenMatesPrefetchReply {
        count.withLock { $0 += 1 }
        let body = #"{"chats": [{"id": "x", "messages_v": 1}], "next_cursor": \#(request.cursor), "done": false}"#
        return OpenMatesPrefetchReply(status: 200, body: Data(body.utf8))
    }
}
