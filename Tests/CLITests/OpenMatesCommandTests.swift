import Foundation
import Testing
import TidingsCore

@testable import tidings

/// `tidings openmates sync|show`, run as the real executable against the in-process sandbox.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesCommandTests {
    private func temporaryStore() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "openmates-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent("store.sqlite").path
    }

    @Test func syncPrintsTheTrafficAndTheStoreAndShowReadsItOffline() async throws {
        let store = try temporaryStore()
        let sync = try await ToolRun.run(["openmates", "sync", "--store", store])
        #expect(sync.status == 0)
        let lines = sync.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.first == "OpenMates sync: sandbox (in process) into \(store)")
        #expect(lines.contains("sent: phased_sync_request ×1, sync_status_request ×1"))
        // `sync_status_response` may arrive before or after the sync completes.
        #expect(
            lines.contains {
                $0.hasPrefix(
                    "received: phase_1_last_chat_ready ×1, phase_1b_chat_content_ready ×1, phase_2_last_20_chats_ready ×1, phased_sync_complete ×1"
                )
            })
        #expect(
            lines.contains(
                "store: 26 chats (16 metadata-only), 60 messages, 10 embeds, 10 embed keys, 1 suggestions (before: 0 chats (0 metadata-only), 0 messages, 0 embeds, 0 embed keys, 0 suggestions)"
            ))
        #expect(lines.last == "sync: complete")

        let show = try await ToolRun.run(["openmates", "show", "--store", store, "--json", "--limit", "1"])
        #expect(show.status == 0)
        let objects = try show.standardOutput.split(separator: "\n").map { try JSONValue(parsing: String($0)) }
        #expect(objects.first?["chats"] == 26)
        let chats = objects.filter { $0["type"] == "chat" }
        #expect(chats.first?["id"] == "chat-000")
        #expect(chats.filter { $0["content"] == "complete" }.count == 10)
        #expect(chats.filter { $0["content"] == "metadata-only" }.count == 16)
        #expect(objects.filter { $0["type"] == "message" }.count == 10)
    }

    @Test func syncWithPrefetchReportsTheChunksChatsAndMessagesItStored() async throws {
        let store = try temporaryStore()
        let sync = try await ToolRun.run(["openmates", "sync", "--store", store, "--prefetch"])
        #expect(sync.status == 0, "\(sync.standardError)")
        let lines = sync.standardOutput.split(separator: "\n").map(String.init)
        // 26 chats: offsets 10…25 in chunks of 3; chat-008 and chat-009 phase 1b already filled.
        #expect(
            lines.contains(
                "prefetch: 6 chunks (cursor 10 → 13 → 16 → 19 → 22 → 25 → done), 14 chats, 84 messages stored; finished"
            ))
        #expect(lines.contains { $0.hasPrefix("store: 26 chats (2 metadata-only), 144 messages,") })
        #expect(lines.last == "sync: complete")

        let json = try await ToolRun.run(["openmates", "sync", "--store", try temporaryStore(), "--prefetch", "--json"])
        #expect(json.status == 0)
        let objects = try json.standardOutput.split(separator: "\n").map { try JSONValue(parsing: String($0)) }
        let prefetch = try #require(objects.first { $0["type"] == "prefetch" })
        #expect(prefetch["chunks"] == 6)
        #expect(prefetch["chats"] == 14)
        #expect(prefetch["messages"] == 84)
        #expect(prefetch["cursors"] == [10, 13, 16, 19, 22, 25])
        #expect(prefetch["done"] == true)
        #expect(prefetch["state"] == "finished")
        // Without --prefetch nothing is prefetched.
        let plain = try await ToolRun.run(["openmates", "sync", "--store", try temporaryStore(), "--json"])
        #expect(!plain.standardOutput.contains("\"prefetch\""))
    }

    @Test func prefetchFromAServerNeedsTheRefreshTokenCookie() async throws {
        let run = try await ToolRun.run([
            "openmates", "sync", "--server", "ws://127.0.0.1:1", "--token", "tok-SECRET", "--prefetch",
        ])
        #expect(run.status == 64)
        #expect(run.standardError.contains("auth_refresh_token"))
        #expect(!(run.standardOutput + run.standardError).contains("SECRET"))
        #expect(openMatesRefreshToken(inCookie: "a=1; auth_refresh_token=r-1") == "r-1")
        #expect(openMatesRefreshToken(inCookie: "auth_refresh_token=") == nil)
    }

    @Test func anUnreachableServerIs69AndTheTokenIsNeverPrinted() async throws {
        let store = try temporaryStore()
        let run = try await ToolRun.run([
            "openmates", "sync", "--server", "ws://127.0.0.1:1", "--token", "tok-SECRET", "--store", store,
        ])
        #expect(run.status == 69)
        #expect(run.standardError.contains("Error: The server could not be reached or refused the login."))
        #expect(!(run.standardOutput + run.standardError).contains("SECRET"))
    }

    @Test func usageErrorsAndAMissingStore() async throws {
        #expect(try await ToolRun.run(["openmates", "sync", "--server", "http://x"]).status == 64)
        #expect(try await ToolRun.run(["openmates", "sync", "--server", "ws://x"]).status == 64)
        #expect(try await ToolRun.run(["openmates", "sync", "--token", "a", "--cookie", "b"]).status == 64)
        #expect(try await ToolRun.run(["openmates", "sync", "--timeout", "0"]).status == 64)
        let missing = try temporaryStore()
        let show = try await ToolRun.run(["openmates", "show", "--store", missing])
        #expect(show.status == 66)
        #expect(!FileManager.default.fileExists(atPath: missing))
    }
}
