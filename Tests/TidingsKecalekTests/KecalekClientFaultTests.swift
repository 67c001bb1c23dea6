import Foundation
import Testing
import TidingsCore
import TidingsKecalek
import TidingsSandbox

/// Faults in the middle of a sync: nothing lost, nothing duplicated, the cache never half-written.
@Suite(.timeLimit(.minutes(1))) struct KecalekClientFaultTests {
    /// Opens the conversation, then puts two new messages and one deletion on the server.
    private func prepare(_ harness: KecalekHarness) async throws -> (
        before: [KecalekMessage], new: [String], deleted: String
    ) {
        let first = await harness.client.messages(conversation: KecalekHarness.conversation)
        _ = await harness.takeLog()
        let deleted = try #require(first.messages.dropLast(3).last?.messageID)
        // Delete behind the client's back: its notification is swallowed by a fault below, so only
        // get_deleted_since can reveal it.
        await harness.server.advanceTime(by: .seconds(300))
        let newIDs = [
            try await harness.server.post(conversation: KecalekHarness.conversation, from: "bob", text: "one")
                .messageID,
            try await harness.server.post(conversation: KecalekHarness.conversation, from: "bob", text: "two")
                .messageID,
        ]
        #expect(
            await eventually {
                harness.recorder.contains {
                    if case .messagesStored(_, let ids) = $0 { ids == newIDs.suffix(1) } else { false }
                }
            })
        return (
            try harness.cache.newestMessages(conversationID: KecalekHarness.conversation, limit: 100), newIDs, deleted
        )
    }

    private func cachedIDs(_ harness: KecalekHarness) throws -> [String] {
        try harness.cache.newestMessages(conversationID: KecalekHarness.conversation, limit: 1000).map(\.messageID)
    }

    @Test func droppedConnectionBetweenGetMessagesAndGetDeletedSinceKeepsTheSyncPoint() async throws {
        let harness = try await KecalekHarness(seeded: 20, reconnects: false)
        _ = await harness.client.messages(conversation: KecalekHarness.conversation)
        await harness.client.close()
        // Changes while the app was closed; then a fresh client (the app relaunched) over the same cache.
        let before = try cachedIDs(harness)
        let doomed = before[10]
        await harness.server.delete(conversation: KecalekHarness.conversation, messageID: doomed)
        let new = try await harness.server.post(conversation: KecalekHarness.conversation, from: "bob", text: "nové")
        let relaunched = try await harness.relaunch()
        await harness.server.inject(.dropConnection, on: "get_deleted_since")
        let point = try harness.cache.syncState(conversationID: KecalekHarness.conversation)

        let page = await relaunched.messages(conversation: KecalekHarness.conversation)
        #expect(page.source.cacheError == .connectionLost)
        try #require(page.traffic.requests.map(\.type) == ["get_messages", "get_deleted_since"])
        // The new message and the newest cached one, asked again because timestamps may tie.
        #expect(page.traffic.requests[0].itemCount == 2)
        // The new message was stored with its page; the deletion is not known yet, so the sync point did not
        // move: the next sync asks for deletions from the same place.
        #expect(try cachedIDs(harness) == before + [new.messageID])
        #expect(try harness.cache.syncState(conversationID: KecalekHarness.conversation) == point)

        // Reconnecting refreshes the open conversation; now both changes land, once.
        try await relaunched.connect()
        var expected = before.filter { $0 != doomed }
        expected.append(new.messageID)
        #expect(try await eventually { try cachedIDs(harness) == expected })
        let retried = await relaunched.messages(conversation: KecalekHarness.conversation)
        #expect(retried.source.isIncremental)
        #expect(retried.messages.map(\.messageID) == expected)
        #expect(Set(expected).count == expected.count)
        await relaunched.close()
    }

    @Test func missingResponseTimesOutOnTheVirtualClockAndTheCacheAnswers() async throws {
        let harness = try await KecalekHarness(seeded: 20)
        _ = await harness.client.messages(conversation: KecalekHarness.conversation)
        let before = try cachedIDs(harness)
        await harness.client.close()
        let relaunched = try await harness.relaunch()
        let posted = try await harness.server.post(conversation: KecalekHarness.conversation, from: "bob", text: "x")
        await harness.server.inject(.neverAnswer, on: "get_deleted_since")
        let point = try harness.cache.syncState(conversationID: KecalekHarness.conversation)

        let waiting = Task { await relaunched.messages(conversation: KecalekHarness.conversation) }
        #expect(await eventually { await harness.server.requestLog.last?.type == "get_deleted_since" })
        #expect(await harness.clock.waitForSleepers(1))
        await harness.clock.advance(by: .seconds(9))
        #expect(await relaunched.connectionState == .connected)
        await harness.clock.advance(by: .seconds(1))
        let page = await waiting.value
        #expect(page.source.cacheError == .timeout)
        #expect(page.traffic.requests.last?.failure == .timeout)
        #expect(page.traffic.requests.last?.bytesReceived == 0)
        // Stored with its page; the sync point waits for the deletions.
        #expect(page.messages.map(\.messageID) == before + [posted.messageID])
        #expect(try cachedIDs(harness) == before + [posted.messageID])
        #expect(try harness.cache.syncState(conversationID: KecalekHarness.conversation) == point)
        await relaunched.close()
    }

    @Test func lateResponseWithinTheTimeoutIsUsed() async throws {
        let harness = try await KecalekHarness(seeded: 5)
        await harness.server.inject(.delay(.seconds(3)), on: "get_messages")
        let waiting = Task { await harness.client.messages(conversation: KecalekHarness.conversation) }
        #expect(await harness.clock.waitForSleepers(2))
        await harness.clock.advance(by: .seconds(3))
        let page = await waiting.value
        #expect(page.source.isFull)
        #expect(page.messages.count == 5)
    }

    @Test func errorStatusAnswersFromTheCacheAndNamesTheStatus() async throws {
        let harness = try await KecalekHarness(seeded: 5)
        let first = await harness.client.messages(conversation: KecalekHarness.conversation)
        await harness.server.inject(.errorStatus("internal_error"), on: "get_messages")
        let page = await harness.client.messages(conversation: KecalekHarness.conversation)
        let error = try #require(page.source.cacheError)
        #expect(error == .server)
        #expect(error.description.contains("internal_error"))
        #expect(page.messages.map(\.messageID) == first.messages.map(\.messageID))
        // Loading older pages has no cache fallback: it reports the failure with an empty page.
        await harness.server.inject(.errorStatus("internal_error"), on: "get_messages")
        let older = await harness.client.messages(conversation: KecalekHarness.conversation, offset: 50)
        #expect(older.source.unavailableError == .server)
    }

    @Test func aServerComparingWithGreaterOrEqualProducesNoDuplicates() async throws {
        let harness = try await KecalekHarness(seeded: 50)
        await harness.server.setComparison(.greaterOrEqual)
        _ = await harness.client.messages(conversation: KecalekHarness.conversation)
        await harness.client.close()
        let relaunched = try await harness.relaunch()
        let new = try await harness.server.post(conversation: KecalekHarness.conversation, from: "bob", text: "po")
        let page = await relaunched.messages(conversation: KecalekHarness.conversation)
        // The server sent the newest cached message again; it is not new and not duplicated.
        #expect(page.traffic.requests.first?.itemCount == 2)
        #expect(page.newMessageIDs == [new.messageID])
        #expect(page.markedRead == [new.messageID])
        #expect(Set(page.messages.map(\.messageID)).count == page.messages.count)
        #expect(try harness.cache.messageCount(conversationID: KecalekHarness.conversation) == 51)
        // A second reopen with nothing new: one echoed message, nothing stored.
        let again = await relaunched.messages(conversation: KecalekHarness.conversation)
        #expect(again.newMessageIDs.isEmpty)
        #expect(again.markedRead.isEmpty)
        #expect(try harness.cache.messageCount(conversationID: KecalekHarness.conversation) == 51)
        await relaunched.close()
    }

    @Test func aFailedCacheWriteLeavesTheCacheAsItWas() async throws {
        let memory = KecalekMemoryCache()
        let harness = try await KecalekHarness(seeded: 10, cache: memory)
        _ = await harness.client.messages(conversation: KecalekHarness.conversation)
        let before = try cachedIDs(harness)
        await harness.client.close()
        _ = try await harness.server.post(conversation: "general", from: "bob", text: "x")
        let relaunched = try await harness.relaunch()
        memory.failNextWriteForTesting()
        let page = await relaunched.messages(conversation: KecalekHarness.conversation)
        #expect(page.source.cacheError == .cache, "\(page.source)")
        #expect(try cachedIDs(harness) == before)
        await relaunched.close()
    }

    @Test func incrementalSyncPagesForwardWhenMoreThanOnePageIsNew() async throws {
        let harness = try await KecalekHarness(seeded: 10)
        _ = await harness.client.messages(conversation: KecalekHarness.conversation, limit: 10)
        await harness.client.close()
        try await harness.server.seed(conversation: KecalekHarness.conversation, from: ["bob"], count: 25)
        let relaunched = try await harness.relaunch()
        _ = await harness.takeLog()
        let page = await relaunched.messages(conversation: KecalekHarness.conversation, limit: 10)
        #expect(page.newMessageIDs.count == 25)
        #expect(page.messages.last?.messageID == "msg-000035")
        let log = await harness.takeLog()
        #expect(log.map(\.type) == ["get_messages", "get_messages", "get_messages", "get_deleted_since", "mark_read"])
        #expect(try harness.cache.messageCount(conversationID: KecalekHarness.conversation) == 35)
        await relaunched.close()
    }
}
