import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsSandbox

@testable import TidingsOpenMates

/// What the seeded model suites (`OpenMatesModelTests`, `OpenMatesPrefetchModelTests`) share: the batch runner,
/// the client's configuration, launching on a store file, settling, and the convergence checks.
enum OpenMatesModel {
    /// Runs seeds `batch * casesPerBatch + offset ..< (batch + 1) * casesPerBatch + offset` one after another;
    /// a test past its time limit stops between two cases.
    static func runBatch(
        _ batch: Int, casesPerBatch: Int, _ run: (UInt64) async throws -> Void
    ) async throws {
        for index in 0..<casesPerBatch {
            try await run(UInt64(batch * casesPerBatch + index))
            if Task.isCancelled { return }
        }
    }

    /// The seed `variable` names in the environment (0 when unset): `OM_SEED=<n> swift test --filter …/oneSeed`.
    static func seed(from variable: String) -> UInt64 {
        UInt64(ProcessInfo.processInfo.environment[variable] ?? "0") ?? 0
    }

    /// A random phased-sync server variant.
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

    /// A client on the store file at `path`, over `transport` wrapping the sandbox's; `beforeStart` runs before
    /// it starts (attach a prefetcher there).
    static func launch(
        _ server: OpenMatesSandboxServer, path: String,
        transport: @escaping (any OpenMatesTransport) -> any OpenMatesTransport = { $0 },
        beforeStart: (OpenMatesClientHarness) async throws -> Void = { _ in }
    ) async throws -> OpenMatesClientHarness {
        let harness = try OpenMatesClientHarness(
            server: server, store: OpenMatesStore(path: path),
            configuration: OpenMatesClientHarness.modelConfiguration, transport: transport)
        try await beforeStart(harness)
        await harness.client.start()
        return harness
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

    /// Cuts the connection and waits until the client noticed (it then waits its reconnect delay on the clock).
    static func disconnect(_ harness: OpenMatesClientHarness) async -> Bool {
        await harness.server.dropAllConnections()
        return await eventually(maxYields: 200_000) {
            await harness.client.status.connectionStatus != .connected
        }
    }

    /// Cuts the connection, waits until the client noticed, then until it synced again.
    static func reconnect(_ harness: OpenMatesClientHarness) async -> Bool {
        guard await disconnect(harness) else { return false }
        return await settle(harness)
    }

    /// Quiescence: a fresh sync (a second one when the server's `total_chat_count` lags a sync behind, so the
    /// server's own view has settled), the action queue drained, then every chat opened and hydrated.
    static func quiesce(
        _ harness: OpenMatesClientHarness, _ server: OpenMatesSandboxServer, seed: UInt64
    ) async throws {
        #expect(await reconnect(harness), "seed \(seed): final sync")
        if await server.variant.lateTotalChatCount {
            #expect(await reconnect(harness), "seed \(seed): final sync with the server's count caught up")
        }
        #expect(
            await eventually(maxYields: 200_000) { (try? harness.store.pendingActions().isEmpty) == true },
            "seed \(seed): actions replayed")
        // The reference server answers a stored message without its versions: the acting device learns the
        // server's messages_v and order from the next sync, so one runs after the queue drained.
        #expect(await reconnect(harness), "seed \(seed): sync after the actions")
        for chat in try harness.store.chatList() { _ = try? await harness.client.openChat(chat.chatID) }
        #expect(
            await eventually {
                guard let chats = try? harness.store.chatList() else { return false }
                return chats.allSatisfy { chat in
                    guard let info = try? harness.store.chat(chat.chatID)?.content else { return false }
                    return info.isComplete(currentMessagesV: chat.versions.messagesV)
                }
            }, "seed \(seed): hydration")
    }

    /// The store equals the server's view: its chats in the server's order (pinned first), versions, flags and
    /// messages; no chat in `deleted` is back.
    static func expectStoreEqualsServer(
        _ harness: OpenMatesClientHarness, _ server: OpenMatesSandboxServer, deleted: Set<String>, seed: UInt64
    ) async throws {
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
    }
}
