import Foundation
import Testing
import TidingsCore
import TidingsSandbox

@testable import TidingsOpenMates

/// The prefetcher's schedule on a TestClock: from cursor 10 in chunks of 3 until `done`, 2 s apart, stored
/// under the sync rules, with a durable cursor.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesPrefetcherTests {
    @Test func aPassFetchesFromCursor10InChunksOf3TwoSecondsApartUntilDone() async throws {
        let harness = try PrefetchHarness(server: await seededServer(parents: 20))
        await harness.prefetcher.start()
        #expect(await harness.drive { await harness.state() == .finished })
        let served = harness.endpoint.served
        #expect(served.map(\.cursor) == [10, 13, 16, 19])
        #expect(served.map(\.status) == [200, 200, 200, 200])
        #expect(served.map(\.at) == [.zero, .seconds(2), .seconds(4), .seconds(6)])
        let expected = Set((0..<20).map(chatID)).subtracting((0..<10).map(chatID))
        #expect(try harness.storedChatIDs() == expected)
        for id in expected {
            #expect(try harness.store.chat(id)?.content.isComplete(currentMessagesV: 3) == true)
        }
        #expect(try harness.store.count(.embeds) == 10 && harness.store.count(.embedKeys) == 10)
        // `done` resets the durable cursor: the next pass starts over.
        #expect(try harness.store.prefetchCursor() == 10)
    }

    @Test func theSpacingHoldsTheNextRequestForTwoSeconds() async throws {
        let harness = try PrefetchHarness(server: await seededServer(parents: 20))
        await harness.prefetcher.start()
        #expect(await eventually { harness.events.pages.count == 1 })
        #expect(await harness.clock.waitForSleepers(1))
        await harness.clock.advance(by: .milliseconds(1999))
        #expect(harness.endpoint.served.count == 1)
        await harness.clock.advance(by: .milliseconds(1))
        #expect(await eventually { harness.events.pages.count == 2 })
        #expect(harness.endpoint.served.map(\.cursor) == [10, 13])
        await harness.prefetcher.stop()
    }

    @Test(arguments: [true, false])
    func doneOnTheLastPageOrOnAnExtraEmptyPageEndsThePassAndResetsTheCursor(extraEmptyPage: Bool) async throws {
        let harness = try PrefetchHarness(server: await seededServer(parents: 16))
        harness.endpoint.variant.doneOnExtraEmptyPage = extraEmptyPage
        await harness.prefetcher.start()
        #expect(await harness.drive { await harness.state() == .finished })
        #expect(harness.servedCursors() == (extraEmptyPage ? [10, 13, 16] : [10, 13]))
        #expect(try harness.storedChatIDs() == Set((10..<16).map(chatID)))
        #expect(try harness.store.prefetchCursor() == 10)
        #expect(harness.events.pages.last?.next == nil)
        // A later trigger starts a fresh pass from 10; everything is already stored, so it writes nothing.
        let firstPass = harness.endpoint.served.count
        await harness.prefetcher.start()
        #expect(await harness.drive { harness.endpoint.served.count == 2 * firstPass })
        #expect(await harness.drive { await harness.state() == .finished })
        #expect(harness.servedCursors()[firstPass] == 10)
        #expect(harness.events.pages.suffix(firstPass).allSatisfy { $0.plan.changes.isEmpty })
    }

    @Test func shortPagesAreFollowedByTheServersNextCursor() async throws {
        let harness = try PrefetchHarness(server: await seededServer(parents: 15))
        harness.endpoint.variant.shortPages = true
        await harness.prefetcher.start()
        #expect(await harness.drive { await harness.state() == .finished })
        #expect(harness.servedCursors() == [10, 12, 14])
        #expect(try harness.storedChatIDs() == Set((10..<15).map(chatID)))
    }

    @Test func theCursorIsDurableAcrossARelaunch() async throws {
        let directory = try OpenMatesTemporaryDirectory()
        let path = directory.path("om.sqlite")
        let server = await seededServer(parents: 25)
        do {
            let harness = try PrefetchHarness(server: server, store: try OpenMatesStore(path: path))
            await harness.prefetcher.start()
            #expect(await harness.drive { harness.events.pages.count == 2 })
            await harness.prefetcher.stop()
            #expect(try harness.store.prefetchCursor() == 16)
        }
        let relaunched = try PrefetchHarness(server: server, store: try OpenMatesStore(path: path))
        await relaunched.prefetcher.start()
        #expect(await relaunched.drive { await relaunched.state() == .finished })
        #expect(relaunched.servedCursors() == [16, 19, 22])
        #expect(try relaunched.storedChatIDs() == Set((10..<25).map(chatID)))
    }

    @Test func theStoredMessageCapStopsIt() async throws {
        let harness = try PrefetchHarness(
            server: await seededServer(parents: 40),
            configuration: .init(requestTimeout: .seconds(3600), maximumStoredMessages: 10))
        await harness.prefetcher.start()
        // 3 chats of 3 messages: 9 < 10, so a second page; 18 ≥ 10 stops before a third.
        #expect(await harness.drive { await harness.state() == .capReached(storedMessages: 18) })
        await harness.clock.advance(by: .seconds(60))
        #expect(harness.endpoint.served.count == 2)
        #expect(try harness.store.prefetchCursor() == 16)
    }
}
