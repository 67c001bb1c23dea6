import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsKecalek
import TidingsNet

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `tidings sandbox kecalek`, run as the real executable: an app connects with only what it printed.
@Suite(.timeLimit(.minutes(1))) struct SandboxCommandTests {
    private func hexKey(_ text: String?) throws -> TidingsCrypto.SymmetricKey {
        let text = try #require(text)
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(try #require(UInt8(text[index..<next], radix: 16)))
            index = next
        }
        return try TidingsCrypto.SymmetricKey(bytes: bytes)
    }

    @Test func servesKecalekUntilSIGINTAndAnAppSyncsWithWhatItPrinted() async throws {
        let child = try ChildProcess.spawn(
            executable: ToolRun.executable.path, arguments: ["sandbox", "kecalek"], standardError: .nullDevice)
        defer { child.signal(SIGKILL) }
        let (printed, complete) = try await child.readOutput(timeout: .seconds(30)) { data in
            String(decoding: data, as: UTF8.self).contains("\nconnect: ")
        }
        #expect(complete)
        let output = String(decoding: printed, as: UTF8.self)
        let values = printedFields(output)
        let url = try #require(values["url"].flatMap(URL.init(string:)))
        #expect(url.host == "127.0.0.1")
        #expect(output.contains("public demo keys"))

        let client = KecalekClient(
            configuration: .init(userID: "alice", reconnects: false),
            transport: KecalekWebSocketTransport(
                url: url, token: values["token alice"], configuration: WebSocket.Configuration(pingInterval: nil)),
            cache: KecalekMemoryCache(),
            decryptor: KecalekAESGCMCipher(keys: ["general": try hexKey(values["key general"])]),
            clock: ContinuousClock())
        try await client.connect()
        let page = await client.messages(conversation: "general", limit: 20)
        #expect(page.messages.count == 20)
        // Decrypted with the printed key: every message has its text.
        #expect(page.messages.allSatisfy { $0.text?.isEmpty == false })
        await client.close()

        // A token it did not print is refused at the upgrade.
        let stranger = KecalekClient(
            configuration: .init(userID: "mallory", reconnects: false),
            transport: KecalekWebSocketTransport(url: url, token: "not-a-token"), cache: KecalekMemoryCache(),
            decryptor: KecalekAESGCMCipher(keys: [:]), clock: ContinuousClock())
        await #expect(throws: (any Error).self) { try await stranger.connect() }

        child.signal(SIGINT)
        let rest = try await child.readOutput(timeout: .seconds(20)) { _ in false }
        let tail = String(decoding: rest.data, as: UTF8.self)
        #expect(tail.contains("Stopped on SIGINT."))
        // Both upgrades were printed as served, with their byte counts; no token was.
        let served = (output + tail).split(separator: "\n").filter { $0.hasPrefix("served: WS /kecalek → ") }
        #expect(served.map { $0.split(separator: " ")[4] } == ["101", "401"])
        #expect(!tail.contains(values["token alice"] ?? "-"))
        #expect(await child.waitForExit(timeout: .seconds(20)) == .exited(0))
    }

    @Test func aBadPortIsAUsageError() async throws {
        let run = try await ToolRun.run(["sandbox", "kecalek", "--port", "70000"])
        #expect(run.status == 64)
        let extra = try await ToolRun.run(["sandbox", "kecalek", "--bogus"])
        #expect(extra.status == 64)
    }
}
