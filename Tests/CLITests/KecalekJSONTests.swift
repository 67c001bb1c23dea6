import Foundation
import Testing
import TidingsSandbox

@testable import tidings

/// `--json` on `kecalek sync` and `kecalek show`: every line of standard output is one JSON object with the keys
/// the help documents, failures are error objects with their sysexits kind and code, and the exit status is
/// the one the text mode has.
@Suite(.timeLimit(.minutes(1))) struct KecalekJSONTests {
    private let runner = Runner(root: tidingsRoot, environment: [:])

    /// Every line of `output` parsed as a JSON object; a line that is not one fails the test.
    private func objects(_ output: String) throws -> [[String: Any]] {
        try output.split(separator: "\n").map { line in
            let value = try JSONSerialization.jsonObject(with: Data(line.utf8))
            return try #require(value as? [String: Any], "not an object: \(line)")
        }
    }

    private func ofType(_ type: String, _ objects: [[String: Any]]) -> [[String: Any]] {
        objects.filter { $0["type"] as? String == type }
    }

    private func keys(_ object: [String: Any]?) -> Set<String> { Set(object?.keys.map { $0 } ?? []) }

    @Test func syncAndShowPrintOnlyJSONLinesWithTheDocumentedKeys() async throws {
        let store = try KecalekCLI.temporaryStore()
        let sync = await runner.capture([
            "kecalek", "sync", "--store", store, "--conversation", "general", "--conversation", "random", "--limit",
            "4", "--json",
        ])
        #expect(sync.status == 0, "\(sync.standardError)")
        #expect(sync.standardError.isEmpty)
        let lines = try objects(sync.standardOutput)
        #expect(
            lines.map { $0["type"] as? String } == ["start", "conversation", "conversation", "total", "store", "store"])
        #expect(keys(lines.first) == ["type", "target", "user", "store", "key"])
        #expect(lines.first?["key"] as? String == "sandbox-demo")
        let conversations = ofType("conversation", lines)
        #expect(
            keys(conversations.first) == [
                "type", "conversation", "source", "synced", "shown", "new", "deleted", "markedRead", "skipped",
                "bytesSent", "bytesReceived", "gap",
            ])
        #expect(conversations.map { $0["conversation"] as? String } == ["general", "random"])
        #expect(conversations.allSatisfy { $0["source"] as? String == "full" && $0["synced"] as? Bool == true })
        #expect(conversations.allSatisfy { $0["new"] as? Int == 4 && $0["shown"] as? Int == 4 })
        #expect(conversations.allSatisfy { ($0["bytesReceived"] as? Int ?? 0) > 0 })
        let total = try #require(ofType("total", lines).first)
        let perConversation = conversations.compactMap { $0["bytesReceived"] as? Int }.reduce(0, +)
        #expect((total["bytesReceived"] as? Int ?? 0) >= perConversation)
        let stored = ofType("store", lines)
        #expect(keys(stored.first) == ["type", "conversation", "messages", "added", "newest"])
        #expect(stored.allSatisfy { $0["messages"] as? Int == 4 && $0["added"] as? Int == 4 })

        let again = await runner.capture(["kecalek", "sync", "--store", store, "--conversation", "general", "--json"])
        #expect(again.status == 0)
        let incremental = ofType("conversation", try objects(again.standardOutput)).first
        #expect(incremental?["source"] as? String == "incremental")
        #expect(incremental?["new"] as? Int == 0)

        let show = await runner.capture([
            "kecalek", "show", "--store", store, "--conversation", "random", "--limit", "2", "--json",
        ])
        #expect(show.status == 0, "\(show.standardError)")
        let shown = try objects(show.standardOutput)
        #expect(shown.map { $0["type"] as? String } == ["cache", "conversation", "message", "message"])
        #expect(keys(shown.first) == ["type", "store", "key", "conversations"])
        #expect(keys(shown[1]) == ["type", "conversation", "cached", "newest"])
        let messages = ofType("message", shown)
        #expect(
            keys(messages.first) == [
                "type", "conversation", "id", "createdAt", "sender", "text", "pinned", "reactions",
            ])
        #expect(messages.allSatisfy { $0["conversation"] as? String == "random" })
        // Oldest first, as the text mode prints them, ending with the newest cached message.
        #expect(messages.last?["createdAt"] as? String == "2026-02-15T22:00:00.150000")
        #expect((messages.last?["text"] as? String)?.hasPrefix("#29 Díky, to pomohlo! Můžeš mi zavolat?") == true)
    }

    @Test func eachFailureKindIsAnErrorObjectWithTheSameExitCodeAsTheText() async throws {
        let (sandbox, endpoint) = try await KecalekCLI.server()
        defer { endpoint.stop() }
        let store = try KecalekCLI.temporaryStore()
        let server = [
            "kecalek", "sync", "--store", store, "--server", endpoint.url.absoluteString, "--user", "alice",
            "--key", KecalekCLI.cacheKey,
        ]
        let keys = try KecalekCLI.conversationKeyArguments(["general", "random"])
        let token = sandbox.token(for: "alice")

        /// Runs `words` with and without `--json`; returns the JSON run's error objects after checking that both
        /// exit with `code` and that the JSON run's standard output is only JSON.
        func errors(_ words: [String], code: Int32, before: () async -> Void = {}) async throws -> [[String: Any]] {
            await before()
            let text = await runner.capture(words)
            await before()
            let json = await runner.capture(words + ["--json"])
            #expect(text.status == code, "\(words): \(text.standardError)")
            #expect(json.status == code, "\(words): \(json.standardError)")
            // Standard error keeps its text lines either way.
            #expect(json.standardError == text.standardError)
            let errors = ofType("error", try objects(json.standardOutput))
            #expect(errors.allSatisfy { $0["code"] as? Int == Int(code) })
            #expect(!json.standardOutput.contains(token))
            return errors
        }

        let usage = try await errors(server.filter { $0 != "alice" && $0 != "--user" } + keys, code: 64)
        #expect(usage.count == 1)
        #expect(usage.first?["kind"] as? String == "usage")
        #expect((usage.first?["message"] as? String)?.hasPrefix("--server needs --user <id>") == true)

        let refused = try await errors(server + ["--token", "not-a-token"] + keys, code: 77)
        #expect(refused.map { $0["kind"] as? String } == ["noperm"])

        // One injected fault fails the first get_messages of a run: general fails, random still syncs.
        let serverError = try await errors(server + ["--token", token] + keys, code: 76) {
            await sandbox.inject(.errorStatus("internal_error"), on: "get_messages")
        }
        #expect(serverError.count == 1)
        #expect(serverError.first?["kind"] as? String == "protocol")
        #expect(serverError.first?["conversation"] as? String == "general")

        endpoint.stop()
        let unreachable = try await errors(
            server.map { $0 == endpoint.url.absoluteString ? "ws://127.0.0.1:9/kecalek" : $0 } + ["--token", token]
                + keys,
            code: 69)
        #expect(unreachable.map { $0["kind"] as? String } == ["unavailable"])

        let missing = try await errors(["kecalek", "show", "--store", store + ".nope"], code: 66)
        #expect(missing.map { $0["kind"] as? String } == ["noinput"])
        let otherKey = try await errors(
            ["kecalek", "show", "--store", store, "--key", String(repeating: "a5", count: 32)], code: 77)
        #expect(otherKey.map { $0["kind"] as? String } == ["noperm"])
    }

    @Test func theBinaryPrintsJSONLinesToo() async throws {
        let store = try KecalekCLI.temporaryStore()
        let run = try await ToolRun.run([
            "kecalek", "sync", "--store", store, "--conversation", "random", "--limit", "3", "--json",
        ])
        #expect(run.status == 0, "\(run.standardError)")
        let lines = try objects(run.standardOutput)
        #expect(lines.map { $0["type"] as? String } == ["start", "conversation", "total", "store"])
        let missing = try await ToolRun.run(["kecalek", "show", "--store", store + ".nope", "--json"])
        #expect(missing.status == 66)
        #expect(try objects(missing.standardOutput).map { $0["kind"] as? String } == ["noinput"])
    }
}
