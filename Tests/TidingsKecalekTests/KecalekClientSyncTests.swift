import Foundation
import Testing
import TidingsCore
import TidingsKecalek
import TidingsSandbox

/// The rows of the document's table "Co se změní v praxi", each asserted with the server's request log
/// and the bytes that crossed the wire.
@Suite(.timeLimit(.minutes(1))) struct KecalekClientSyncTests {
    @Test func firstOpenIsAFullFetchOfTheNewestPageAndMarksOthersMessagesRead() async throws {
        let harness = try await KecalekHarness(seeded: 120)
        let page = await harness.client.messages(conversation: KecalekHarness.conversation, limit: 50)

        #expect(page.source.isFull)
        #expect(page.messages.count == 50)
        #expect(page.totalCount == 120)
        #expect(page.messages.first?.messageID == "msg-000071")
        #expect(page.messages.last?.messageID == "msg-000120")
        #expect(page.messages.map(\.createdAt) == page.messages.map(\.createdAt).sorted())
        #expect(page.newMessageIDs.count == 50)
        let log = await harness.takeLog()
        try #require(log.map(\.type) == ["get_messages", "mark_read"])
        #expect(log[0].since == nil)
        // Only bob's 25 messages of the 50 are marked; alice's own are not.
        #expect(page.markedRead.count == 25)
        let sender = Dictionary(uniqueKeysWithValues: page.messages.map { ($0.messageID, $0.senderID) })
        #expect(page.markedRead.allSatisfy { sender[$0] == KecalekHarness.other })
        #expect(page.traffic.requests.map(\.type) == ["get_messages", "mark_read"])
        #expect(page.traffic.bytesSent == log.reduce(0) { $0 + $1.bytes })
        #expect(page.traffic.bytesReceived > 50 * 200)
        #expect(try harness.cache.messageCount(conversationID: KecalekHarness.conversation) == 50)
    }

    @Test func reopeningAfterFiveMinutesFetchesOnlyTheNewMessages() async throws {
        let harness = try await KecalekHarness(seeded: 50)
        let first = await harness.client.messages(conversation: KecalekHarness.conversation)
        let newestCached = try #require(first.messages.last?.createdAt)

        // The app is closed before the messages arrive (a connected client would be told about them by
        // `new_message`, and whether that lands before the reopen is up to the scheduler).
        await harness.client.close()
        _ = await harness.takeLog()
        await harness.server.advanceTime(by: .seconds(300))
        let new1 = try await harness.server.post(
            conversation: KecalekHarness.conversation, from: "bob", text: "ještě tu?")
        let new2 = try await harness.server.post(conversation: KecalekHarness.conversation, from: "carol", text: "jo")
        let relaunched = try await harness.relaunch()
        let reopened = await relaunched.messages(conversation: KecalekHarness.conversation)

        #expect(reopened.source.isIncremental)
        #expect(reopened.newMessageIDs == [new1.messageID, new2.messageID])
        #expect(reopened.messages.count == 50)
        #expect(reopened.messages.suffix(2).map(\.text) == ["ještě tu?", "jo"])
        let log = await harness.takeLog()
        try #require(log.map(\.type) == ["get_messages", "get_deleted_since", "mark_read"])
        // One tick before the newest cached message: a message stamped like it is not lost (issue 9).
        #expect(log[0].since == newestCached.oneTickEarlier.text)
        #expect(log[1].since == newestCached.oneTickEarlier.text)
        #expect(log[2].request.parameters["message_ids"] == [.string(new1.messageID), .string(new2.messageID)])
        try #require(reopened.traffic.requests.count == 3)
        // The newest cached message comes again (dropped by ID) with the two new ones.
        #expect(reopened.traffic.requests[0].itemCount == 3)
        // The document's promise: a fraction of the bytes of the full fetch.
        #expect(Double(reopened.traffic.totalBytes) < 0.10 * Double(first.traffic.totalBytes))
        #expect(try harness.cache.messageCount(conversationID: KecalekHarness.conversation) == 52)
        await relaunched.close()
    }

    @Test func reopeningWithNothingNewSendsNoMarkRead() async throws {
        let harness = try await KecalekHarness(seeded: 10)
        _ = await harness.client.messages(conversation: KecalekHarness.conversation)
        _ = await harness.takeLog()
        let again = await harness.client.messages(conversation: KecalekHarness.conversation)
        #expect(again.source.isIncremental)
        #expect(again.messages.count == 10)
        #expect(again.markedRead.isEmpty)
        #expect(await harness.takeLog().map(\.type) == ["get_messages", "get_deleted_since"])
    }

    @Test func loadingOlderIsAFullFetchAtAnOffsetAndGoesIntoTheCache() async throws {
        let harness = try await KecalekHarness(seeded: 120)
        _ = await harness.client.messages(conversation: KecalekHarness.conversation, limit: 50)
        _ = await harness.takeLog()
        let older = await harness.client.messages(conversation: KecalekHarness.conversation, limit: 50, offset: 50)

        #expect(older.source.isFull)
        #expect(older.messages.first?.messageID == "msg-000021")
        #expect(older.messages.last?.messageID == "msg-000070")
        let log = await harness.takeLog()
        #expect(log.first?.type == "get_messages")
        #expect(log.first?.since == nil)
        #expect(log.first?.request.parameters["offset"] == 50)
        #expect(try harness.cache.messageCount(conversationID: KecalekHarness.conversation) == 100)
        // Reopening still asks only for what is newer than the newest cached message.
        _ = await harness.client.messages(conversation: KecalekHarness.conversation)
        #expect(await harness.takeLog().first?.since == "2026-02-15T22:00:00.119999")
    }

    @Test func afterAReconnectOnlyMessagesSinceTheDisconnectCome() async throws {
        let harness = try await KecalekHarness(seeded: 50)
        _ = await harness.client.messages(conversation: KecalekHarness.conversation)
        _ = await harness.takeLog()

        await harness.server.dropAllConnections()
        #expect(await eventually { await harness.client.connectionState == .connecting })
        var missed: [String] = []
        for text in ["a", "b", "c"] {
            missed.append(
                try await harness.server.post(conversation: KecalekHarness.conversation, from: "bob", text: text)
                    .messageID)
        }
        #expect(await harness.clock.waitForSleepers(1))
        await harness.clock.advance(by: .seconds(1))
        #expect(
            await eventually {
                harness.recorder.contains {
                    if case .refreshed(_, let ids, _) = $0 { ids == missed } else { false }
                }
            })
        let log = await harness.takeLog()
        try #require(log.map(\.type) == ["get_messages", "get_deleted_since", "mark_read"])
        #expect(log[0].since == "2026-02-15T22:00:00.049999")
        #expect(await harness.server.connectionsAccepted == 2)
        #expect(try harness.cache.messageCount(conversationID: KecalekHarness.conversation) == 53)
    }

    @Test func offlineTheCacheAnswers() async throws {
        let harness = try await KecalekHarness(seeded: 30, reconnects: false)
        let online = await harness.client.messages(conversation: KecalekHarness.conversation, limit: 20)
        await harness.server.dropAllConnections()
        #expect(await eventually { await harness.client.connectionState == .disconnected })

        let offline = await harness.client.messages(conversation: KecalekHarness.conversation, limit: 20)
        #expect(offline.source.cacheError == .notConnected)
        #expect(offline.messages.map(\.messageID) == online.messages.map(\.messageID))
        #expect(offline.traffic.totalBytes == 0)
        let empty = await harness.client.messages(conversation: "random")
        #expect(empty.source.unavailableError == .notConnected)
        #expect(empty.messages.isEmpty)
    }

    @Test func requestsWhileReconnectingWaitForTheConnection() async throws {
        let harness = try await KecalekHarness(seeded: 5)
        _ = await harness.client.messages(conversation: KecalekHarness.conversation)
        await harness.server.dropAllConnections()
        #expect(await eventually { await harness.client.connectionState == .connecting })
        _ = try await harness.server.post(conversation: KecalekHarness.conversation, from: "bob", text: "hned")
        let waiting = Task { await harness.client.messages(conversation: "random") }
        // The reconnect delay (1 s) and the request's wait (10 s) both sleep on the virtual clock.
        #expect(await harness.clock.waitForSleepers(2))
        await harness.clock.advance(by: .seconds(1))
        let page = await waiting.value
        #expect(page.source.isFull)
        // The request's 10 s wait ended with the reconnect: its timer sleeps no more (nothing else does).
        await harness.recorder.wait { if case .refreshed = $0 { true } else { false } }
        #expect(await eventually { harness.clock.pendingSleepers == 0 })
    }

    @Test func requestsWhileDisconnectedFailClearlyAfterTheWait() async throws {
        let gate = RefusableTransport()
        let harness = try await KecalekHarness(seeded: 5, reconnectWait: .seconds(5)) { server in
            gate.base = server.transport(userID: KecalekHarness.me)
            return gate
        }
        _ = await harness.client.messages(conversation: KecalekHarness.conversation)
        gate.refusing = true
        await harness.server.dropAllConnections()
        #expect(await eventually { await harness.client.connectionState == .connecting })
        let waiting = Task { await harness.client.messages(conversation: "random") }
        #expect(await harness.clock.waitForSleepers(2))
        await harness.clock.advance(by: .seconds(5))
        let page = await waiting.value
        #expect(page.source.unavailableError == .notConnected)
        #expect(page.traffic.requests.first?.failure == .notConnected)
        #expect(page.traffic.totalBytes == 0)
        // Once the server is reachable again the client gets back on its own.
        gate.refusing = false
        // The attempt refused last may still be on its way back to sleep: advancing before its sleep is
        // registered would leave its deadline after the advance (if that attempt connects instead, no
        // one sleeps and this wait gives up harmlessly).
        _ = await harness.clock.waitForSleepers(1)
        await harness.clock.advance(by: .seconds(30))
        #expect(await eventually { await harness.client.connectionState == .connected })
        await harness.client.close()
    }

    @Test func concurrentConnectsShareOneConnection() async throws {
        let harness = try await KecalekHarness(seeded: 1, reconnects: false)
        await harness.server.dropAllConnections()
        #expect(await eventually { await harness.client.connectionState == .disconnected })
        async let first: Void = harness.client.connect()
        async let second: Void = harness.client.connect()
        _ = try await (first, second)
        #expect(await harness.server.connectionsAccepted == 2)
        #expect(await harness.server.openConnectionCount == 1)
        await harness.client.close()
        #expect(await eventually { await harness.server.openConnectionCount == 0 })
    }

    @Test func concurrentOpensOfOnePageShareOneFetch() async throws {
        let harness = try await KecalekHarness(seeded: 10)
        async let first = harness.client.messages(conversation: KecalekHarness.conversation)
        async let second = harness.client.messages(conversation: KecalekHarness.conversation)
        let (a, b) = await (first, second)
        #expect(a.messages.map(\.messageID) == b.messages.map(\.messageID))
        #expect(await harness.takeLog().map(\.type) == ["get_messages", "mark_read"])
        // Different limits at offset 0 share one sync and one `mark_read` too (issue 9).
        try await harness.server.post(conversation: KecalekHarness.conversation, from: "bob", text: "nová")
        try await harness.server.post(conversation: KecalekHarness.conversation, from: "carol", text: "další")
        async let wide = harness.client.messages(conversation: KecalekHarness.conversation, limit: 50)
        async let narrow = harness.client.messages(conversation: KecalekHarness.conversation, limit: 3)
        let (w, n) = await (wide, narrow)
        #expect(n.messages.map(\.messageID) == Array(w.messages.suffix(3)).map(\.messageID))
        #expect(n.messages.count == 3)
        #expect(await harness.takeLog().filter { $0.type == "mark_read" }.count == 1)
        // A different page is its own fetch.
        async let newest = harness.client.messages(conversation: KecalekHarness.conversation, limit: 5)
        async let older = harness.client.messages(conversation: KecalekHarness.conversation, limit: 5, offset: 5)
        _ = await (newest, older)
        #expect(await harness.takeLog().filter { $0.type == "get_messages" }.count == 2)
    }
}
