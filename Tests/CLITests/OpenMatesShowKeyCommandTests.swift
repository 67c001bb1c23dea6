import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsSandbox

/// `tidings openmates show` with the master key (a file or an environment variable, never an argument):
/// titles, messages and embeds in clear; without it, "encrypted" and no ciphertext; a wrong key reads every
/// chat as hidden and locked; the key is never printed.
@Suite(.timeLimit(.minutes(2))) struct OpenMatesShowKeyCommandTests {
    private static let masterKeyText = Data(OpenMatesSandboxServer.defaultMasterKey.bytes).base64EncodedString()

    private func syncedStore() async throws -> (store: String, directory: URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "openmates-show-key-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let store = directory.appendingPathComponent("store.sqlite").path
        let sync = try await ToolRun.run(["openmates", "sync", "--store", store])
        #expect(sync.status == 0)
        return (store, directory)
    }

    /// Runs the tool with `extra` added to its environment.
    private func run(_ arguments: [String], environment extra: [String: String]) async throws -> ToolRun {
        var environment = ProcessInfo.processInfo.environment
        for (name, value) in extra { environment[name] = value }
        let outcome = try await ChildProcess.run(
            executable: ToolRun.executable.path, arguments: arguments, environment: environment,
            timeout: .seconds(45))
        let status: Int32 =
            switch outcome.termination {
            case .exited(let status): status
            case .signalled(let signal): 128 + signal
            }
        return ToolRun(
            status: status, standardOutput: String(decoding: outcome.standardOutput, as: UTF8.self),
            standardError: String(decoding: outcome.standardError, as: UTF8.self))
    }

    @Test func aKeyFilePrintsTitlesMessagesAndEmbedsInClear() async throws {
        let (store, directory) = try await syncedStore()
        let keyFile = directory.appendingPathComponent("master.key").path
        try Data((Self.masterKeyText + "\n").utf8).write(to: URL(fileURLWithPath: keyFile))
        let show = try await ToolRun.run([
            "openmates", "show", "--store", store, "--master-key-file", keyFile, "--limit", "1", "--chat", "chat-000",
            "--chat", "chat-020",
        ])
        #expect(show.status == 0)
        let lines = show.standardOutput.split(separator: "\n").map(String.init)
        #expect(
            lines.contains(
                "Decrypted with the master key: 2 chat(s) open, 0 hidden and locked, 0 without a usable key."))
        #expect(lines.contains("  title: \(OpenMatesSandboxServer.seededTitle(chatID: "chat-000"))"))
        #expect(
            lines.contains {
                $0.hasSuffix("  assistant: \(OpenMatesSandboxServer.seededMessage(chatID: "chat-000", index: 5))")
            })
        #expect(
            lines.contains(
                "  embed \(OpenMatesSandboxServer.seededEmbedID(chatID: "chat-000")) (code): "
                    + OpenMatesSandboxServer.seededEmbedPreview(chatID: "chat-000")))
        // A metadata-only chat still has its title in clear, and no messages.
        #expect(lines.contains("  title: \(OpenMatesSandboxServer.seededTitle(chatID: "chat-020"))"))
        #expect(!(show.standardOutput + show.standardError).contains(Self.masterKeyText))
        #expect(!show.standardOutput.contains("encrypted)"))
    }

    @Test func theEnvironmentVariableGivesTheKeyToJSONOutput() async throws {
        let (store, _) = try await syncedStore()
        let show = try await run(
            ["openmates", "show", "--store", store, "--json", "--limit", "3", "--chat", "chat-001"],
            environment: ["TIDINGS_OPENMATES_MASTER_KEY": Self.masterKeyText])
        #expect(show.status == 0)
        let objects = try show.standardOutput.split(separator: "\n").map { try JSONValue(parsing: String($0)) }
        #expect(objects.first?["decrypted"] == true)
        let chat = try #require(objects.first { $0["type"] == "chat" })
        #expect(chat["title"]?.stringValue == OpenMatesSandboxServer.seededTitle(chatID: "chat-001"))
        #expect(chat["access"] == "visible")
        let texts = objects.filter { $0["type"] == "message" }.compactMap { $0["text"]?.stringValue }
        #expect(texts == (3..<6).map { OpenMatesSandboxServer.seededMessage(chatID: "chat-001", index: $0) })
        let embed = try #require(objects.first { $0["type"] == "embed" })
        #expect(embed["content"]?.stringValue == OpenMatesSandboxServer.seededEmbedContent(chatID: "chat-001"))
        #expect(embed["embedType"] == "code")
        #expect(!show.standardOutput.contains(Self.masterKeyText))
    }

    @Test func withoutAKeyItSaysEncryptedAndPrintsNoCiphertext() async throws {
        let (store, _) = try await syncedStore()
        let text = try await run(
            ["openmates", "show", "--store", store, "--limit", "1"], environment: ["TIDINGS_OPENMATES_MASTER_KEY": ""])
        #expect(text.status == 0)
        #expect(text.standardOutput.contains("Content is end-to-end encrypted: give the master key"))
        #expect(!text.standardOutput.contains("title:"))
        #expect(text.standardOutput.contains("(") && text.standardOutput.contains("bytes, encrypted)"))
        let json = try await run(
            ["openmates", "show", "--store", store, "--json", "--chat", "chat-000"],
            environment: ["TIDINGS_OPENMATES_MASTER_KEY": ""])
        let objects = try json.standardOutput.split(separator: "\n").map { try JSONValue(parsing: String($0)) }
        let chat = try #require(objects.first { $0["type"] == "chat" })
        #expect(chat["title"] == .null)
        #expect(chat["access"] == "encrypted")
        #expect(objects.allSatisfy { $0["text"] == nil })
        #expect(!objects.contains { $0["type"] == "embed" })
    }

    @Test func aWrongKeyReadsEveryChatAsLockedAndPrintsNoGarbage() async throws {
        let (store, _) = try await syncedStore()
        let other = Data(TidingsCrypto.SymmetricKey.random().bytes).base64EncodedString()
        let show = try await run(
            ["openmates", "show", "--store", store, "--limit", "1", "--chat", "chat-000"],
            environment: ["TIDINGS_OPENMATES_MASTER_KEY": other])
        #expect(show.status == 0)
        let lines = show.standardOutput.split(separator: "\n").map(String.init)
        #expect(
            lines.contains(
                "Decrypted with the master key: 0 chat(s) open, 1 hidden and locked, 0 without a usable key."))
        #expect(lines.contains { $0.hasPrefix("  hidden chat, locked") })
        #expect(lines.contains("  title: (cannot decrypt: OpenMatesCryptoError.hiddenChatLocked)"))
        #expect(lines.contains { $0.hasSuffix("assistant: (cannot decrypt: OpenMatesCryptoError.hiddenChatLocked)") })
        #expect(!show.standardOutput.contains(other))
    }

    @Test func aBadOrMissingKeyFileFailsWithoutPrintingIt() async throws {
        let (store, directory) = try await syncedStore()
        let bad = directory.appendingPathComponent("bad.key").path
        try Data("c2hvcnQ=".utf8).write(to: URL(fileURLWithPath: bad))
        let refused = try await ToolRun.run(["openmates", "show", "--store", store, "--master-key-file", bad])
        #expect(refused.status == 65)
        #expect(refused.standardError.contains("does not hold a master key"))
        #expect(!(refused.standardOutput + refused.standardError).contains("c2hvcnQ"))
        let missing = try await ToolRun.run([
            "openmates", "show", "--store", store, "--master-key-file", directory.appendingPathComponent("none").path,
        ])
        #expect(missing.status == 66)
        let badEnvironment = try await run(
            ["openmates", "show", "--store", store], environment: ["TIDINGS_OPENMATES_MASTER_KEY": "not-a-key"])
        #expect(badEnvironment.status == 65)
        #expect(!badEnvironment.standardError.contains("not-a-key"))
    }
}
