import Foundation
import Testing
import TidingsSandbox

/// `tidings kecalek sync` and the Kecalek demo part, run as the real executable.
@Suite(.timeLimit(.minutes(1))) struct KecalekCommandTests {
    @Test func syncTwiceThenShowOffline() async throws {
        let store = try KecalekCLI.temporaryStore()
        let first = try await ToolRun.run(["kecalek", "sync", "--store", store, "--limit", "20"])
        #expect(first.status == 0, "\(first.standardError)")
        #expect(first.standardOutput.contains("general: full fetch — 20 shown, 20 new, 0 deleted, 13 marked read"))
        #expect(first.standardOutput.contains("  general: 20 messages (+20), newest 2026-02-15T22:00:00.120000"))
        // The fixed sandbox key is called what it is.
        #expect(first.standardOutput.contains("the sandbox's public demo key: anyone can open it"))
        #expect(!first.standardOutput.contains("private)"))
        let second = try await ToolRun.run(["kecalek", "sync", "--store", store, "--conversation", "general"])
        #expect(second.status == 0)
        #expect(second.standardOutput.contains("general: incremental (after_ts) — 20 shown, 0 new"))
        #expect(second.standardOutput.contains("get_messages since=2026-02-15T22:00:00.119999 → 1 items"))
        #expect(second.standardOutput.contains("  general: 20 messages (+0)"))
        let before = try KecalekCLI.listing(beside: store)
        let show = try await ToolRun.run([
            "kecalek", "show", "--store", store, "--conversation", "random", "--limit", "1",
        ])
        #expect(show.status == 0)
        #expect(show.standardOutput.contains("random: 20 cached, newest 2026-02-15T22:00:00.150000\n"))
        let newest = "  2026-02-15T22:00:00.150000  alice: #29 Díky, to pomohlo! Můžeš mi zavolat?"
        #expect(show.standardOutput.contains(newest))
        #expect(show.standardOutput.contains("public demo key"))
        #expect(show.standardOutput.split(separator: "\n").count == 3)
        #expect(show.standardError.isEmpty)
        #expect(try KecalekCLI.listing(beside: store) == before, "show created or removed a file")
        // The file is encrypted at rest: no message text, no conversation or message ID, no sender.
        let raw = try Data(contentsOf: URL(fileURLWithPath: store))
        for secret in ["výletu", "general", "random", "msg-0000", "carol"] {
            #expect(raw.range(of: Data(secret.utf8)) == nil, "\(secret) is readable in the file")
        }
    }

    @Test func usageErrorsExit64BeforeAnyFileIsCreated() async throws {
        let store = try KecalekCLI.temporaryStore()
        let server = ["kecalek", "sync", "--store", store, "--server", "ws://127.0.0.1:9/"]
        let keys = try KecalekCLI.conversationKeyArguments(["general"])
        let noKey = try await ToolRun.run(server + ["--user", "alice"] + keys)
        #expect(noKey.status == 64)
        #expect(noKey.standardError.contains("--key"))
        let noUser = try await ToolRun.run(server + ["--key", KecalekCLI.cacheKey] + keys)
        #expect(noUser.status == 64)
        #expect(noUser.standardError.contains("--server needs --user <id>"))
        let noConversationKey = try await ToolRun.run(
            server + ["--user", "alice", "--key", KecalekCLI.cacheKey] + keys + ["--conversation", "random"])
        #expect(noConversationKey.status == 64)
        #expect(noConversationKey.standardError.contains("No --conversation-key for 'random'"))
        #expect(noConversationKey.standardError.contains("--conversation-key random=<64 hex digits>"))
        let badURL = try await ToolRun.run([
            "kecalek", "sync", "--store", store, "--server", "http://x", "--key", KecalekCLI.cacheKey,
        ])
        #expect(badURL.status == 64)
        #expect(try KecalekCLI.listing(beside: store).isEmpty, "a usage error created a file")
    }

    @Test func anUnreachableServerExits69() async throws {
        // Port 9 (discard) has no listener here; a port freed by stopping a server of our own could be taken by
        // another test's listener before this run connects (a full run once reached one and failed this test).
        let url = "ws://127.0.0.1:9/kecalek"
        let store = try KecalekCLI.temporaryStore()
        let run = try await ToolRun.run(
            ["kecalek", "sync", "--store", store, "--server", url, "--user", "alice", "--key", KecalekCLI.cacheKey]
                + (try KecalekCLI.conversationKeyArguments(["general", "random"])))
        #expect(run.status == 69, "\(run.standardError)")
        let errors = KecalekCLI.errorLines(run)
        #expect(errors.count == 1)
        #expect(errors.first?.contains("cannot reach 127.0.0.1:") == true)
        #expect(errors.first?.contains("nothing synced (general, random)") == true)
    }

    @Test func aRefusedTokenExits77() async throws {
        let (_, endpoint) = try await KecalekCLI.server()
        defer { endpoint.stop() }
        let store = try KecalekCLI.temporaryStore()
        let run = try await ToolRun.run(
            [
                "kecalek", "sync", "--store", store, "--server", endpoint.url.absoluteString, "--user", "alice",
                "--token", "not-a-token", "--key", KecalekCLI.cacheKey,
            ] + (try KecalekCLI.conversationKeyArguments(["general"])))
        #expect(run.status == 77, "\(run.standardError)")
        #expect(KecalekCLI.errorLines(run).count == 1)
        #expect(run.standardError.contains("refused the token (HTTP 401)"))
        #expect(!run.standardError.contains("not-a-token"), "the token was printed")
    }

    @Test func aServerErrorForOneConversationExits76AndTheOtherStillSyncs() async throws {
        let (sandbox, endpoint) = try await KecalekCLI.server()
        defer { endpoint.stop() }
        await sandbox.inject(.errorStatus("internal_error"), on: "get_messages")
        let store = try KecalekCLI.temporaryStore()
        let run = try await ToolRun.run(
            [
                "kecalek", "sync", "--store", store, "--server", endpoint.url.absoluteString, "--user", "alice",
                "--token", sandbox.token(for: "alice"), "--key", KecalekCLI.cacheKey,
            ] + (try KecalekCLI.conversationKeyArguments(["general", "random"])))
        #expect(run.status == 76, "\(run.standardError)")
        let errors = KecalekCLI.errorLines(run)
        #expect(errors.count == 1)
        #expect(errors.first?.hasPrefix("Error: general: not synced — KecalekError.server") == true)
        #expect(run.standardOutput.contains("random: full fetch — 30 shown, 30 new"))
        #expect(run.standardOutput.contains("encrypted with your --key"))
    }

    @Test func aWrongConversationKeyExits65InsteadOfRefetchingEveryRun() async throws {
        let (sandbox, endpoint) = try await KecalekCLI.server()
        defer { endpoint.stop() }
        let store = try KecalekCLI.temporaryStore()
        let run = try await ToolRun.run([
            "kecalek", "sync", "--store", store, "--server", endpoint.url.absoluteString, "--user", "alice",
            "--token", sandbox.token(for: "alice"), "--key", KecalekCLI.cacheKey, "--conversation", "random",
            "--conversation-key", "random=" + String(repeating: "01", count: 32), "--limit", "5",
        ])
        #expect(run.status == 65, "\(run.standardError)")
        #expect(
            KecalekCLI.errorLines(run) == [
                "Error: random: none of the 5 fetched messages decrypted with its --conversation-key; nothing was cached."
            ])
    }

    @Test func syncReplacesADamagedCacheAndSaysWhatItDid() async throws {
        let store = try KecalekCLI.temporaryStore()
        try Data("not a database at all, just text".utf8).write(to: URL(fileURLWithPath: store))
        let run = try await ToolRun.run(["kecalek", "sync", "--store", store, "--conversation", "random"])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.contains("Recovery: \(store) was not an SQLite database"))
        #expect(run.standardOutput.contains("moved aside to \(store).corrupt-"))
        let moved = try KecalekCLI.listing(beside: store).filter { $0.hasPrefix("cache.sqlite.corrupt-") }
        #expect(moved.count == 1)
        let show = try await ToolRun.run(["kecalek", "show", "--store", store])
        #expect(show.status == 0)
        #expect(show.standardOutput.hasPrefix("Recovery: an earlier sync moved a damaged cache aside to "))
    }

    @Test func demoShowsTheTableRowsWithBytes() async throws {
        let run = try await ToolRun.run(["demo", "--only", "kecalek"])
        #expect(run.status == 0, "\(run.standardError)")
        for row in [
            "• First open of the conversation", "• Reopen after 5 minutes (2 new messages)",
            "• Load older (scroll up, offset 50)", "• After a reconnect (3 messages posted during the outage)",
            "• Offline", "• One-second-resolution server: first open", "• One-second-resolution server: reopen",
        ] {
            #expect(run.standardOutput.contains(row), "\(row)")
        }
        #expect(run.standardOutput.contains("incremental (after_ts); 50 shown, 2 new"))
        #expect(run.standardOutput.contains("refreshed #general incrementally; 3 new"))
    }
}
