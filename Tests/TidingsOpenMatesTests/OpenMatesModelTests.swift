import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsSandbox

@testable import TidingsOpenMates

/// Seeded random servers (variants), histories (posts and deletions from another device) and client
/// schedules (disconnects; relaunches with the same, a cleared or a damaged store; kills between two store
/// transactions, then a relaunch on the same file; the five offline actions — send, delete message, pin,
/// archive, hide — taken at random points, replayed after reconnects, relaunches and kills): after quiescence
/// the store equals the server's view (its order, pinned chats first, and every flag included), the action
/// queue is empty, no deleted chat is back, every queued message reached the server exactly once (or its chat
/// was deleted) and no action was applied twice (the sandbox's `appliedActions`).
///
/// Not modelled yet: prefetch, and deletions made by another device while this client is offline (phased sync
/// sends no deletions; the README's other signals are not acted on).
@Suite(.serialized, .timeLimit(.minutes(1))) struct OpenMatesModelTests {
    // 100 batches of 10 (1,000 seeds): all 1,000 took 78–193 s in filtered runs, but one seed took up to 10 s
    // while other engineers' builds and test runs loaded the machine; batches of 10 keep each well inside the
    // per-test minute (a full run ran a first batch of 20 past it).
    static let casesPerBatch = 10

    @Test(arguments: 0..<100)
    func seededCasesConverge(batch: Int) async throws {
        for index in 0..<Self.casesPerBatch {
            let seed = UInt64(batch * Self.casesPerBatch + index)
            try await Self.runCase(seed: seed)
            if Task.isCancelled { return }
        }
    }

    @Test func oneSeed() async throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["OM_SEED"] ?? "0") ?? 0
        try await Self.runCase(seed: seed)
    }

    @Test func theKillHookLeavesWholeTransactionsOnly() async throws {
        let store = try OpenMatesStore.inMemory()
        let chat = OpenMatesChat(chatID: "chat-a", lastEdited: 1)
        try Self.armKill(store, afterRowWrites: 1)
        // Two statements in one transaction: the second meets the limit, and the first is rolled back with it.
        #expect(throws: (any Error).self) {
            try store.apply([.upsertChat(chat), .upsertChat(OpenMatesChat(chatID: "chat-b", lastEdited: 2))])
        }
        #expect(try store.chatList().isEmpty)
        // Dead from there on: the next transaction fails too.
        #expect(throws: (any Error).self) { try store.enqueue(OpenMatesPendingAction(kind: .pinChat, chatID: "x")) }
        #expect(try store.pendingActions().isEmpty)
    }

    static func variant(_ random: inout SplitMix64) -> OpenMatesSandboxVariant {
        var variant = OpenMatesSandboxVariant()
        variant.messagesAsJSONStrings = Bool.random(using: &random)
        variant.reorderPhases = Bool.random(using: &random)
        variant.thinEventsInterleaved = Bool.random(using: &random)
        variant.duplicateDeliveries = Bool.random(using: &random)
        if Int.random(in: 0..<4, using: &random) == 0 {
            variant.disconnectAfter = [
                "phase_1_last_chat_ready", "phase_1b_chat_content_ready", "phase_2_last_20_chats_ready",
            ].randomElement(using: &random)
        }
        return variant
    }

    /// Drives the client until its sync is complete on an open connection, advancing the clock past reconnect
    /// delays.
    static func settle(_ harness: OpenMatesClientHarness) async -> Bool {
        await eventually(maxYields: 200_000) {
            let status = await harness.client.status
            if case .reconnecting = status.connectionStatus, harness.clock.pendingSleepers > 0 {
                await harness.clock.advance(by: .seconds(31))
            }
            return status.sync == .complete && status.connectionStatus == .connected
        }
    }

    /// Cuts the connection, waits until the client noticed, then until it synced again.
    static func reconnect(_ harness: OpenMatesClientHarness) async -> Bool {
        await harness.server.dropAllConnections()
        let noticed = await eventually(maxYields: 200_000) {
            await harness.client.status.connectionStatus != .connected
        }
        guard noticed else { return false }
        return await settle(harness)
    }

    /// Makes every store write fail once `rowWrites` more rows were written, as if the process died there:
    /// the transaction that meets the limit rolls back whole, so the file holds whole transactions only. The
    /// limit is on SQLite's `total_changes()`, which a rollback does not lower, so nothing is written after it;
    /// the triggers are TEMP, on this connection alone, so a relaunch on the same file is free of them.
    static func armKill(_ store: OpenMatesStore, afterRowWrites rowWrites: Int) throws {
        try store.database.writeWithoutTransaction { db in
            try db.executeScript(
                "CREATE TEMP TABLE IF NOT EXISTS kill_limit(n INTEGER NOT NULL); DELETE FROM kill_limit;")
            try db.execute("INSERT INTO kill_limit(n) SELECT total_changes() + ?", [Int64(rowWrites)])
            for table in OpenMatesStoreSchema.tables.map(\.name) {
                for operation in ["INSERT", "UPDATE", "DELETE"] {
                    try db.executeScript(
                        """
                        CREATE TEMP TRIGGER IF NOT EXISTS kill_\(table)_\(operation) BEFORE \(operation) ON main.\(table)
                        BEGIN
                            SELECT RAISE(ABORT, 'killed') WHERE total_changes() >= (SELECT n FROM kill_limit);
                        END;
                        """)
                }
            }
        }
    }

    /// What the schedule queued: message IDs sent (by chat) and deleted, for the "never lost, never twice" check.
    struct Queued {
        var sent: [String: String] = [:]
        var stamp = 0
    }

    /// One random offline action on a random chat; an action the store could not queue (a kill is armed) or
    /// one on a deleted chat throws and is not counted.
    static func randomAction(
        _ harness: OpenMatesClientHarness, _ server: OpenMatesSandboxServer, _ queued: inout Queued,
        _ random: inout SplitMix64
    ) async {
        let ids = await server.orderedChats.map(\.chatID)
        guard let chat = ids.randomElement(using: &random) else { return }
        let value = Bool.random(using: &random)
        switch Int.random(in: 0..<5, using: &random) {
        case 0:
            queued.stamp += 1
            let messageID = "local-\(queued.stamp)"
            // Client stamps above the server's clock, spaced so posts in between never overtake them.
            let created = 1_700_010_000 + queued.stamp * 1_000
            if (try? await harness.client.sendMessage(
                chatID: chat, messageID: messageID, encryptedContent: "sealed-\(messageID)", createdAt: created))
                != nil
            {
                queued.sent[messageID] = chat
            }
        case 1:
            let messages = await server.chats[chat]?.messages.compactMap { $0["message_id"]?.stringValue } ?? []
            guard let messageID = messages.randomElement(using: &random) else { return }
            _ = try? await harness.client.deleteMessage(chatID: chat, messageID: messageID)
        case 2: _ = try? await harness.client.setPinned(value, chatID: chat)
        case 3: _ = try? await harness.client.setArchived(value, chatID: chat)
        default: _ = try? await harness.client.setHidden(value, chatID: chat)
        }
    }

    static func runCase(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        let server = OpenMatesSandboxServer()
        await server.seed(
            parents: Int.random(in: 0...25, using: &random), messagesEach: Int.random(in: 0...4, using: &random),
            subChatsOfNewest: Int.random(in: 0...3, using: &random))
        await server.setVariant(variant(&random))
        let directory = try OpenMatesTemporaryDirectory()
        let path = directory.path("om.sqlite")
        var deleted: Set<String> = []

        var harness = try OpenMatesClientHarness(server: server, store: OpenMatesStore(path: path))
        await harness.client.start()
        #expect(await settle(harness), "seed \(seed): first sync")
        var queued = Queued()
        for _ in 0..<Int.random(in: 0...7, using: &random) {
            let ids = await server.orderedChats.map(\.chatID)
            switch Int.random(in: 0..<8, using: &random) {
            case 0:
                guard let chat = ids.randomElement(using: &random) else { continue }
                let posted = await server.postMessageFromOtherDevice(chatID: chat, role: "assistant")
                let version = await server.chats[chat]?.messagesV
                #expect(
                    await eventually { (try? harness.store.chat(chat)?.chat.versions.messagesV) ?? 0 >= version ?? 0 },
                    "seed \(seed): post \(posted ?? "-")")
            case 1:
                guard let chat = ids.randomElement(using: &random) else { continue }
                await server.deleteChat(chat)
                deleted.insert(chat)
                #expect(await eventually { (try? harness.store.chat(chat)) == nil }, "seed \(seed): delete")
            case 2:
                #expect(await reconnect(harness), "seed \(seed): reconnect")
            case 3, 4:
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    await randomAction(harness, server, &queued, &random)
                }
            case 5:
                // A kill between two transactions: writes fail from a random row on while the client goes on
                // (an action, a reconnect and its sync), then the process is gone and relaunches on the file.
                try armKill(harness.store, afterRowWrites: Int.random(in: 0..<40, using: &random))
                await randomAction(harness, server, &queued, &random)
                // Until the client has read the next sync's end (over a failing store, it cannot complete).
                let completes = await harness.client.traffic.received["phased_sync_complete", default: 0]
                await harness.server.dropAllConnections()
                _ = await eventually(maxYields: 200_000) {
                    let status = await harness.client.status
                    if case .reconnecting = status.connectionStatus, harness.clock.pendingSleepers > 0 {
                        await harness.clock.advance(by: .seconds(31))
                    }
                    return await harness.client.traffic.received["phased_sync_complete", default: 0] > completes
                }
                await harness.client.close()
                harness.store.database.close()
                harness = try OpenMatesClientHarness(server: server, store: OpenMatesStore(path: path))
                await harness.client.start()
                #expect(await settle(harness), "seed \(seed): relaunch after a kill")
            default:
                // Relaunch: the same store, a cleared one, or a damaged one (whose queue goes with the file:
                // those actions are not counted as lost).
                let damage = Int.random(in: 0..<3, using: &random)
                await harness.client.close()
                if damage != 0 {
                    for action in try harness.store.pendingActions() {
                        if let messageID = action.messageID { queued.sent[messageID] = nil }
                    }
                }
                harness.store.database.close()
                switch damage {
                case 0: break
                case 1: try SQLiteDatabase.removeFiles(at: path)
                default: try Data(repeating: 0xA5, count: 4096).write(to: URL(fileURLWithPath: path))
                }
                harness = try OpenMatesClientHarness(server: server, store: OpenMatesStore(path: path))
                await harness.client.start()
                #expect(await settle(harness), "seed \(seed): relaunch")
            }
        }
        // Quiescence: a fresh sync, the action queue drained, then every chat opened (hydrated when needed).
        #expect(await reconnect(harness), "seed \(seed): final sync")
        #expect(
            await eventually(maxYields: 200_000) { (try? harness.store.pendingActions().isEmpty) == true },
            "seed \(seed): actions replayed")
        for chat in try harness.store.chatList() { _ = try await harness.client.openChat(chat.chatID) }
        #expect(
            await eventually {
                guard let chats = try? harness.store.chatList() else { return false }
                return chats.allSatisfy { chat in
                    guard let info = try? harness.store.chat(chat.chatID)?.content else { return false }
                    return info.isComplete(currentMessagesV: chat.versions.messagesV)
                }
            }, "seed \(seed): hydration")
        if ProcessInfo.processInfo.environment["OM_SEED"] != nil {
            for chat in try harness.store.chatList() {
                let info = try harness.store.chat(chat.chatID)?.content
                print(
                    "DEBUG \(chat.chatID) v\(chat.versions.messagesV) content \(String(describing: info)) server \(await server.chats[chat.chatID].map { "\($0.messagesV)/\($0.messages.count)" } ?? "-")"
                )
            }
            print("DEBUG received \(await server.received.map(\.type))")
        }

        let serverChats = await server.orderedChats
        #expect(try harness.store.chatList().map(\.chatID) == serverChats.map(\.chatID), "seed \(seed): chat list")
        for chat in serverChats {
            let stored = try harness.store.chat(chat.chatID)
            #expect(stored?.chat.versions.messagesV == chat.messagesV, "seed \(seed): \(chat.chatID) version")
            #expect(stored?.chat.pinned == chat.pinned, "seed \(seed): \(chat.chatID) pinned")
            #expect(stored?.chat.hidden == chat.hidden, "seed \(seed): \(chat.chatID) hidden")
            #expect(stored?.chat.archived == chat.archived, "seed \(seed): \(chat.chatID) archived")
            #expect(
                try harness.store.messages(chatID: chat.chatID).map(\.messageID)
                    == chat.messages.compactMap { $0["message_id"]?.stringValue },
                "seed \(seed): \(chat.chatID) messages")
        }
        for chat in deleted { #expect(try harness.store.chat(chat) == nil, "seed \(seed): \(chat) resurrected") }
        // No queued action lost or applied twice: each message sent reached the server once, unless its chat is
        // gone; no message was sent or deleted twice.
        let applied = await server.appliedActions
        for (messageID, chat) in queued.sent where !deleted.contains(chat) {
            #expect(
                applied.filter { $0 == "send_message:\(chat):\(messageID)" }.count == 1,
                "seed \(seed): \(messageID) lost or applied twice")
        }
        let messageActions = applied.filter { $0.hasPrefix("send_message:") || $0.hasPrefix("delete_message:") }
        #expect(Set(messageActions).count == messageActions.count, "seed \(seed): an action applied twice")
        await harness.client.close()
        harness.store.database.close()
    }
}
