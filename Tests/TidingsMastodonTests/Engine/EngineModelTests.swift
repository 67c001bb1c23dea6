import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox
import TidingsSandboxKit

/// Model-based test of the account engine across the sandbox's server variants (Mastodon, GoToSocial,
/// Pleroma, Nextcloud Social, Mastodon with a keyword filter, Mastodon with a capped home feed): random server
/// histories (posts by two followed accounts, boosts, edits, deletes, mentions and favourites that notify the
/// reader) interleaved with random client schedules (refresh, load older, gap loads from either side,
/// favourite / bookmark / boost and their undo, notification and unread polls, reading and marker syncs,
/// foreground and background, deletion re-checks, polling through `MastodonPollScheduler` on the virtual
/// clock, clean restarts and crashes — the engine dropped and the store closed at a random point, also with
/// an action in the outbox or an operation in flight —, offline stretches (every connection refused, the stream
/// closed, actions pending, refreshes failing with nothing changed, polling told the path is gone sending
/// nothing; on the way back the outbox replays and the stream reopens), server errors and drops on the next
/// request, the user
/// stream started and dropped — its events then arrive concurrently with the other operations, so a seed's
/// interleaving is not exactly reproducible, while every invariant must hold for any interleaving).
///
/// After every step: no duplicate in the cached home, statuses in strictly descending `ServerID` order, the
/// local markers never moved backwards. After quiescence (faults off, outbox replayed, every gap loaded, the
/// newest page reached, cached statuses re-checked): the cached home equals the server's home exactly (no
/// silent hole, no duplicate, no resurrected status), each cached status has the server's text and the
/// reader's state, the server's markers are the local ones, every notification the server shows is stored,
/// and every action the reader took and the server did not refuse is what the server shows (replayed after
/// a crash, never lost, never reordered behind its undo).
///
/// Seeds run concurrently, ``width`` at a time, each with its own sandbox, clock and store.
/// `TIDINGS_MASTODON_ENGINE_MODEL_CASES=N` runs N seeds (1,000 by default), `TIDINGS_MASTODON_ENGINE_MODEL_SEED=S`
/// starts at S; a failure names its seed, prints its history and the command that replays it.
@Suite(.timeLimit(.minutes(5)))
struct EngineModelTests {
    static var caseCount: Int {
        ProcessInfo.processInfo.environment["TIDINGS_MASTODON_ENGINE_MODEL_CASES"].flatMap { Int($0) } ?? 1_000
    }

    static var firstSeed: UInt64 {
        ProcessInfo.processInfo.environment["TIDINGS_MASTODON_ENGINE_MODEL_SEED"].flatMap { UInt64($0) }
            ?? 0xE9_0000
    }

    /// How many seeds run at once (`TIDINGS_MASTODON_ENGINE_MODEL_WIDTH`, 2 by default): each engine's work
    /// runs on its store's queue and the sandbox answers on the pool, so two seeds in flight keep both cores
    /// busy while one waits for the other. Not more: in a full run the other suites' in-process servers share
    /// the pool's two threads, and a deeper queue of this test's jobs starved them (4 at once timed out the
    /// CLI's terminal-session tests).
    static var width: Int {
        max(1, ProcessInfo.processInfo.environment["TIDINGS_MASTODON_ENGINE_MODEL_WIDTH"].flatMap { Int($0) } ?? 2)
    }

    static let variants: [(String, MastodonSandboxVariant)] = {
        func lenient(_ variant: MastodonSandboxVariant) -> MastodonSandboxVariant {
            var variant = variant
            variant.requestsPerWindow = 1_000_000  // the virtual clock hardly moves: the window never ends
            return variant
        }
        var keyword = MastodonSandboxVariant.mastodon
        keyword.hiddenKeyword = "#hidden"
        var capped = MastodonSandboxVariant.mastodon
        capped.feedCap = 25
        return [
            ("mastodon", lenient(.mastodon)), ("gotosocial", lenient(.goToSocial)), ("pleroma", lenient(.pleroma)),
            ("nextcloud", lenient(.nextcloud)), ("mastodon+filter", lenient(keyword)),
            ("mastodon+cap", lenient(capped)),
        ]
    }()

    /// Where the seeds' store files go: a RAM file system when there is one (the stores are reopened after
    /// crashes, so they are files, but nothing needs them on a disk).
    static func storeDirectory() -> URL {
        let shm = URL(fileURLWithPath: "/dev/shm", isDirectory: true)
        var isDirectory: ObjCBool = false
        let base =
            FileManager.default.fileExists(atPath: shm.path, isDirectory: &isDirectory) && isDirectory.boolValue
                && FileManager.default.isWritableFile(atPath: shm.path) ? shm : FileManager.default.temporaryDirectory
        return base.appendingPathComponent("tidings-engine-model-\(UUID())")
    }

    /// The command that runs `seed` alone.
    static func replayCommand(_ seed: UInt64) -> String {
        "TIDINGS_MASTODON_ENGINE_MODEL_SEED=\(seed) TIDINGS_MASTODON_ENGINE_MODEL_CASES=1 "
            + "swift test --filter EngineModelTests"
    }

    /// Runs one seed; the failure (with the seed, its history and the replay command), or nil.
    static func runSeed(_ seed: UInt64, directory: URL) async -> String? {
        var model: EngineModel
        do {
            model = try await EngineModel(seed: seed, directory: directory)
        } catch {
            return "seed \(seed) could not start: \(error)\nreplay: \(replayCommand(seed))"
        }
        do {
            try await model.run()
        } catch {
            model.failure = model.failure ?? "threw \(error)"
        }
        await model.finish()
        guard let failure = model.failure else { return nil }
        return "seed \(seed): \(failure)\nreplay: \(replayCommand(seed))\n" + model.history.joined(separator: "\n")
    }

    @Test func randomHistoriesConvergeToTheServersView() async throws {
        let directory = Self.storeDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let seeds = (0..<Self.caseCount).map { Self.firstSeed &+ UInt64($0) }
        let failure: String? = await withTaskGroup(of: String?.self) { group in
            var next = seeds.makeIterator()
            for _ in 0..<Self.width {
                guard let seed = next.next() else { break }
                group.addTask { await Self.runSeed(seed, directory: directory) }
            }
            while let result = await group.next() {
                if let result {
                    group.cancelAll()
                    return result
                }
                if let seed = next.next() { group.addTask { await Self.runSeed(seed, directory: directory) } }
            }
            return nil
        }
        if let failure {
            print(failure)
            Issue.record(Comment(rawValue: failure))
        }
    }
}
