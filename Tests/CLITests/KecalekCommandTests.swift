import Foundation
import Testing

/// `tidings kecalek sync|show` and the Kecalek demo part, run as the real executable.
@Suite(.timeLimit(.minutes(1))) struct KecalekCommandTests {
    private func temporaryStore() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kecalek-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent("cache.sqlite").path
    }

    @Test func syncTwiceThenShowOffline() async throws {
        let store = try temporaryStore()
        let first = try await ToolRun.run(["kecalek", "sync", "--store", store, "--limit", "20"])
        #expect(first.status == 0, "\(first.standardError)")
        #expect(first.standardOutput.contains("general: full fetch — 20 shown, 20 new, 0 deleted, 13 marked read"))
        #expect(first.standardOutput.contains("  general: 20 messages (+20), newest 2026-02-15T22:00:00.120000"))
        let second = try await ToolRun.run(["kecalek", "sync", "--store", store, "--conversation", "general"])
        #expect(second.status == 0)
        #expect(second.standardOutput.contains("general: incremental (after_ts) — 20 shown, 0 new"))
        #expect(second.standardOutput.contains("get_messages since=2026-02-15T22:00:00.119999 → 1 items"))
        #expect(second.standardOutput.contains("  general: 20 messages (+0)"))
        let show = try await ToolRun.run([
            "kecalek", "show", "--store", store, "--conversation", "random", "--limit", "1",
        ])
        #expect(show.status == 0)
        #expect(show.standardOutput.contains("random: 20 cached, newest 2026-02-15T22:00:00.150000\n"))
        let newest = "  2026-02-15T22:00:00.150000  alice: #29 Díky, to pomohlo! Můžeš mi zavolat?"
        #expect(show.standardOutput.contains(newest))
        #expect(show.standardOutput.split(separator: "\n").count == 3)
        #expect(show.standardError.isEmpty)
        // The file is encrypted at rest: the message text is nowhere in it.
        let raw = try Data(contentsOf: URL(fileURLWithPath: store))
        #expect(raw.range(of: Data("výletu".utf8)) == nil)
    }

    @Test func usageErrorsExit64AndMissingStoreExits1() async throws {
        let noKey = try await ToolRun.run(["kecalek", "sync", "--server", "ws://127.0.0.1:9/", "--conversation", "x"])
        #expect(noKey.status == 64)
        #expect(noKey.standardError.contains("--key"))
        let badURL = try await ToolRun.run([
            "kecalek", "sync", "--server", "http://x", "--key", String(repeating: "ab", count: 32),
        ])
        #expect(badURL.status == 64)
        // A usage error creates no cache file.
        #expect(!FileManager.default.fileExists(atPath: "kecalek-cache.sqlite"))
        let missing = try await ToolRun.run(["kecalek", "show", "--store", "/nonexistent/kecalek.sqlite"])
        #expect(missing.status == 1)
    }

    @Test func demoShowsTheTableRowsWithBytes() async throws {
        let run = try await ToolRun.run(["demo", "--only", "kecalek"])
        #expect(run.status == 0, "\(run.standardError)")
        for row in [
            "• First open of the conversation", "• Reopen after 5 minutes (2 new messages)",
            "• Load older (scroll up, offset 50)", "• After a reconnect (3 messages posted during the outage)",
            "• Offline",
        ] {
            #expect(run.standardOutput.contains(row), "\(row)")
        }
        #expect(run.standardOutput.contains("incremental (after_ts); 50 shown, 2 new"))
        #expect(run.standardOutput.contains("refreshed #general incrementally; 3 new"))
    }
}
