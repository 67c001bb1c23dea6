import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsSandbox

@testable import TidingsOpenMates

/// The model-based test's schedules with a prefetcher attached to the client (kept apart from
/// `OpenMatesModelTests`): seeded random servers (phased-sync and prefetch variants), histories (posts and
/// deletions from another device, online and while the app is not running), and schedules that interleave
/// prefetch pages with syncs, reconnects, hide/archive actions, condition changes and relaunches with the same,
/// a cleared or a damaged store. After quiescence the store equals the server's view and no deleted chat is
/// back: prefetch changed nothing sync would not have.
@Suite(.serialized, .timeLimit(.minutes(1))) struct OpenMatesPrefetchModelTests {
    // 10 batches of 5 (50 seeds): small batches stay far from the per-test minute on a machine shared with
    // other builds, beside `OpenMatesModelTests`; `OM_PREFETCH_SEED` replays any other seed.
    static let casesPerBatch = 5

    @Test(arguments: 0..<10)
    func seededCasesWithPrefetchConverge(batch: Int) async throws {
        try await OpenMatesModel.runBatch(batch, casesPerBatch: Self.casesPerBatch) { try await Self.runCase(seed: $0) }
    }

    /// `OM_PREFETCH_SEED=<n> swift test --filter OpenMatesPrefetchModelTests/oneSeed` replays one case.
    @Test func oneSeed() async throws {
        try await Self.runCase(seed: OpenMatesModel.seed(from: "OM_PREFETCH_SEED"))
    }

    static func prefetchVariant(_ random: inout SplitMix64) -> OpenMatesSandboxPrefetchVariant {
        var variant = OpenMatesSandboxPrefetchVariant()
        variant.shortPages = Bool.random(using: &random)
        variant.doneOnExtraEmptyPage = Bool.random(using: &random)
        variant.repeatPhase1bChats = Bool.random(using: &random)
        return variant
    }

    /// A client and a prefetcher attached to it, on one store and one clock.
    static func launch(
        _ server: OpenMatesSandboxServer, path: String, variant: OpenMatesSandboxPrefetchVariant
    ) async throws -> (OpenMatesClientHarness, PrefetchHarness) {
        var prefetch: PrefetchHarness?
        let client = try await OpenMatesModel.launch(
            server, path: path,
            beforeStart: { client in
                let attached = try PrefetchHarness(server: server, store: client.store, clock: client.clock)
                attached.endpoint.variant = variant
                await attached.prefetcher.attach(to: client.client)
                prefetch = attached
            })
        return (client, try #require(prefetch))
    }

    static func runCase(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed &+ 0x5EED_0000)
        let server = OpenMatesSandboxServer()
        await server.seed(
            parents: Int.random(in: 0...40, using: &random), messagesEach: Int.random(in: 0...4, using: &random),
            subChatsOfNewest: Int.random(in: 0...3, using: &random))
        await server.setVariant(OpenMatesModel.variant(&random))
        let variant = prefetchVariant(&random)
        let directory = try OpenMatesTemporaryDirectory()
        let path = directory.path("om.sqlite")
        var deleted: Set<String> = []

        var (harness, prefetch) = try await launch(server, path: path, variant: variant)
        #expect(await OpenMatesModel.settle(harness), "seed \(seed): first sync")
        for _ in 0..<Int.random(in: 1...8, using: &random) {
            let ids = await server.orderedChats.map(\.chatID)
            switch Int.random(in: 0..<8, using: &random) {
            case 0:
                guard let chat = ids.randomElement(using: &random) else { continue }
                await server.postMessageFromOtherDevice(chatID: chat, role: "assistant")
                let version = await server.chats[chat]?.messagesV
                #expect(
                    await eventually { (try? harness.store.chat(chat)?.chat.versions.messagesV) == version },
                    "seed \(seed): post")
            case 1:
                guard let chat = ids.randomElement(using: &random) else { continue }
                await server.deleteChat(chat)
                deleted.insert(chat)
                #expect(await eventually { (try? harness.store.chat(chat)) == nil }, "seed \(seed): delete")
            case 2:
                #expect(await OpenMatesModel.reconnect(harness), "seed \(seed): reconnect")
            case 3:
                guard let chat = ids.randomElement(using: &random) else { continue }
                if Bool.random(using: &random) {
                    _ = try await harness.client.setHidden(
                        Bool.random(using: &random), chatID: chat, masterKey: server.masterKey,
                        unlock: OpenMatesOfflineActionsTests.unlock)
                } else {
                    _ = try await harness.client.setPinned(Bool.random(using: &random), chatID: chat)
                }
                #expect(
                    await eventually(maxYields: 200_000) { (try? harness.store.pendingActions().isEmpty) == true },
                    "seed \(seed): action replayed")
            case 4, 5:
                // Some prefetch pages (or to the end of the pass), with the clock stepping the 2 s spacing.
                await prefetch.prefetcher.start()
                let target = prefetch.events.pages.count + Int.random(in: 1...4, using: &random)
                #expect(
                    await prefetch.drive {
                        if prefetch.events.pages.count >= target { return true }
                        if case .running = await prefetch.state() { return false }
                        return await prefetch.prefetcher.hasNoRun()
                    }, "seed \(seed): prefetch pages")
            case 6:
                // A condition blocks it mid-pass, then allows it again.
                await prefetch.prefetcher.update(.init(isOnline: true, isExpensive: true))
                #expect(await prefetch.state() == .blocked(.expensiveNetwork), "seed \(seed): blocked")
                await prefetch.prefetcher.update(PrefetchHarness.allowed)
            default:
                await harness.client.close()
                await prefetch.prefetcher.stop()
                harness.store.database.close()
                switch Int.random(in: 0..<3, using: &random) {
                case 0: break
                case 1: try SQLiteDatabase.removeFiles(at: path)
                default: try Data(repeating: 0xA5, count: 4096).write(to: URL(fileURLWithPath: path))
                }
                // Sometimes another device deletes a chat while the app is not running (no chat_deleted).
                if Bool.random(using: &random), let chat = ids.randomElement(using: &random) {
                    await server.deleteChat(chat)
                    deleted.insert(chat)
                }
                (harness, prefetch) = try await launch(server, path: path, variant: variant)
                #expect(await OpenMatesModel.settle(harness), "seed \(seed): relaunch")
            }
        }
        // Quiescence: prefetch stopped, a fresh sync, the queue drained, every chat opened.
        await prefetch.prefetcher.stop()
        try await OpenMatesModel.quiesce(harness, server, seed: seed)
        await prefetch.prefetcher.stop()
        try await OpenMatesModel.expectStoreEqualsServer(harness, server, deleted: deleted, seed: seed)
        await harness.client.close()
        await prefetch.prefetcher.logout()
        harness.store.database.close()
    }
}

extension OpenMatesPrefetcher {
    /// Whether no run is under way (test helper: the pass ended, failed or was stopped).
    func hasNoRun() -> Bool { runTask == nil }
}
