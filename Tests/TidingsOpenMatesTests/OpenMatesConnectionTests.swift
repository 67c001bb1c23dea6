import Foundation
import Testing
import TidingsCore
import TidingsSandbox

@testable import TidingsOpenMates

/// Reconnects, pings, cross-device updates, logout, and the servers the variants make.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesConnectionTests {
    @Test func everyReconnectSendsAPhasedSyncAgainAndStatusGoesBackToPending() async throws {
        let harness = try OpenMatesClientHarness()
        await harness.server.seed(parents: 4)
        await harness.client.start()
        #expect(await harness.untilSynced())
        await harness.server.dropAllConnections()
        #expect(await harness.untilStatus { $0.connectionStatus == .reconnecting(attempt: 1) && $0.offlineBanner })
        #expect(await harness.clock.waitForSleepers(1))
        await harness.clock.advance(by: .seconds(1))
        #expect(
            await harness.untilStatus { $0.connectionStatus == .connected && $0.sync == .pending && !$0.offlineBanner })
        #expect(await harness.untilSynced())
        let requests = await harness.received("phased_sync_request")
        #expect(requests.count == 2)
        #expect(requests.allSatisfy { $0.payload["phase"] == "all" })
        // The second request declares what the first sync stored.
        #expect(requests[1].payload["client_chat_ids"]?.arrayValue?.count == 4)
    }

    @Test func reconnectBacksOffFailsVisiblyAfterTenAttemptsAndKeepsTryingAtTheCap() async throws {
        var transport: RefusableOpenMatesTransport?
        let harness = try OpenMatesClientHarness(transport: { base in
            let refusable = RefusableOpenMatesTransport(base)
            transport = refusable
            return refusable
        })
        let refusable = try #require(transport)
        await harness.client.start()
        #expect(await harness.untilSynced())
        refusable.refusing = true
        await harness.server.dropAllConnections()
        #expect(await harness.untilStatus { $0.connectionStatus == .reconnecting(attempt: 1) })
        var delays: [Int] = []
        for attempt in 1...10 {
            #expect(await harness.clock.waitForSleepers(1))
            let before = harness.clock.now
            await harness.clock.run(maxSteps: 1)
            delays.append(Int(before.duration(to: harness.clock.now).components.seconds))
            if attempt < 10 {
                #expect(await harness.untilStatus { $0.connectionStatus == .reconnecting(attempt: attempt + 1) })
            }
        }
        #expect(await harness.untilStatus { $0.connectionStatus == .failed && $0.offlineBanner })
        // Full jitter near its ceiling: 1, 2, 4, … capped at 30 s.
        #expect(delays == [0, 1, 3, 7, 15, 29, 29, 29, 29, 29])
        #expect(refusable.attempts == 11)
        // Failed, but not given up while the network may be there: one attempt per capped delay, still failed.
        for _ in 0..<20 {
            #expect(await harness.clock.waitForSleepers(1))
            let before = harness.clock.now
            await harness.clock.run(maxSteps: 1)
            #expect(before.duration(to: harness.clock.now) > .seconds(29))
        }
        #expect(await eventually { refusable.attempts == 31 })
        #expect(await harness.client.status.connectionStatus == .failed)
        // The server is back: the next capped attempt connects and syncs, without the app's start().
        refusable.refusing = false
        for _ in 0..<3 where refusable.attempts == 31 {
            #expect(await harness.advanceToNextDeadline())
            _ = await eventually { refusable.attempts > 31 }
        }
        #expect(await harness.untilStatus { $0.connectionStatus == .connected && $0.sync == .complete })
        #expect(refusable.attempts == 32)
    }

    @Test func appPingsGoOutEvery25SecondsAndServerPingsAreAnswered() async throws {
        let harness = try OpenMatesClientHarness()
        await harness.client.start()
        #expect(await harness.untilSynced())
        #expect(await harness.received("ping").isEmpty)
        #expect(await harness.clock.waitForSleepers(1))
        await harness.clock.advance(by: .seconds(25))
        #expect(await eventually { await harness.received("ping").count == 1 })
        #expect(await harness.clock.waitForSleepers(1))
        await harness.clock.advance(by: .seconds(25))
        #expect(await eventually { await harness.received("ping").count == 2 })
        #expect(await eventually { await harness.sent("pong").count == 2 })
    }

    @Test func aServerThatStopsAnsweringPingsIsDeadWithinTheIntervalPlusThePongDeadlineAndSyncsAgain() async throws {
        let harness = try OpenMatesClientHarness()
        await harness.server.seed(parents: 3)
        await harness.client.start()
        #expect(await harness.untilSynced())
        // Answered pings keep the connection: two full cycles, one connection.
        for count in 1...2 {
            #expect(await harness.clock.waitForSleepers(1))
            await harness.clock.advance(by: .seconds(25))
            #expect(await eventually { await harness.client.traffic.received["pong"] == count })
        }
        #expect(await harness.server.connectionsAccepted == 1)
        var variant = OpenMatesSandboxVariant()
        variant.unansweredPings = true
        await harness.server.setVariant(variant)
        #expect(await harness.clock.waitForSleepers(1))
        await harness.clock.advance(by: .seconds(25))
        #expect(await eventually { await harness.received("ping").count == 3 })
        // The pong deadline (10 s) has not passed: still connected.
        await harness.clock.advance(by: .seconds(9))
        #expect(await harness.client.status.connectionStatus == .connected)
        await harness.clock.advance(by: .seconds(1))
        #expect(await harness.untilStatus { $0.connectionStatus == .reconnecting(attempt: 1) })
        #expect(await harness.clock.waitForSleepers(1))
        await harness.clock.advance(by: .seconds(1))
        #expect(await harness.untilSynced())
        #expect(await harness.server.connectionsAccepted == 2)
        #expect(await harness.received("phased_sync_request").count == 2)
        await harness.client.close()
    }

    @Test func crossDeviceMessagesAndDeletionsReachTheStore() async throws {
        let harness = try OpenMatesClientHarness()
        await harness.server.seed(parents: 3, messagesEach: 2)
        await harness.client.start()
        #expect(await harness.untilSynced())
        let posted = try #require(
            await harness.server.postMessageFromOtherDevice(chatID: "chat-001", role: "assistant"))
        #expect(await eventually { (try? harness.store.messages(chatID: "chat-001").last?.messageID) == posted })
        guard case .loaded(let messages) = try await harness.client.openChat("chat-001") else {
            Issue.record("not loaded")
            return
        }
        #expect(messages.count == 3)
        #expect(try harness.store.chatList().first?.chatID == "chat-001")
        await harness.server.deleteChat("chat-002")
        #expect(await eventually { (try? harness.store.chat("chat-002")) == nil })
        #expect(try harness.store.count(.tombstones) == 1)
    }

    @Test func forceLogoutErasesTheStoreTheQueueAndTheKeys() async throws {
        let harness = try OpenMatesClientHarness()
        await harness.server.seed(parents: 3)
        await harness.client.start()
        #expect(await harness.untilSynced())
        try harness.store.enqueue(OpenMatesPendingAction(kind: .pin, chatID: "chat-001"))
        await harness.server.forceLogout()
        #expect(await harness.until { $0 == .failure(.loggedOut) })
        for table in OpenMatesStoreTable.allCases { #expect(try harness.store.count(table) == 0) }
        #expect(await harness.client.status.connectionStatus == .disconnected)
    }

    @Test(arguments: ["strings", "reordered", "thin", "duplicates", "disconnect"])
    func everyServerVariantConvergesToTheSameStore(variantName: String) async throws {
        let plain = try OpenMatesClientHarness()
        await plain.server.seed(parents: 13, messagesEach: 3, subChatsOfNewest: 2)
        await plain.client.start()
        #expect(await plain.untilSynced())

        var variant = OpenMatesSandboxVariant()
        switch variantName {
        case "strings": variant.messagesAsJSONStrings = true
        case "reordered": variant.reorderPhases = true
        case "thin": variant.thinEventsInterleaved = true
        case "duplicates": variant.duplicateDeliveries = true
        default: variant.disconnectAfter = "phase_1_last_chat_ready"
        }
        let other = try OpenMatesClientHarness()
        await other.server.seed(parents: 13, messagesEach: 3, subChatsOfNewest: 2)
        await other.server.setVariant(variant)
        await other.client.start()
        if variantName == "disconnect" {
            #expect(await other.untilStatus { $0.connectionStatus == .reconnecting(attempt: 1) })
            #expect(await other.clock.waitForSleepers(1))
            await other.clock.advance(by: .seconds(1))
        }
        #expect(await other.untilSynced())
        #expect(try other.store.chatList() == plain.store.chatList())
        for chat in try plain.store.chatList() {
            #expect(try other.store.messages(chatID: chat.chatID) == plain.store.messages(chatID: chat.chatID))
            #expect(try other.store.chat(chat.chatID)?.content == plain.store.chat(chat.chatID)?.content)
        }
    }
}
