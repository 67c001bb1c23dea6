import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsOpenMates

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `tidings sandbox openmates`, run as the real executable: a client syncs with only what it printed.
@Suite(.timeLimit(.minutes(1))) struct SandboxOpenMatesCommandTests {
    @Test func servesOpenMatesUntilSIGINTAndAClientSyncs() async throws {
        let child = try ChildProcess.spawn(
            executable: ToolRun.executable.path, arguments: ["sandbox", "openmates"], standardError: .nullDevice)
        defer { child.signal(SIGKILL) }
        let (printed, complete) = try await child.readOutput(timeout: .seconds(30)) { data in
            String(decoding: data, as: UTF8.self).contains("\nconnect: ")
        }
        #expect(complete)
        let output = String(decoding: printed, as: UTF8.self)
        let lines = output.split(separator: "\n")
        let url = try #require(lines.first { $0.hasPrefix("url: ") }).dropFirst(5)
        let origin = try #require(URL(string: String(url).components(separatedBy: "/v1/ws")[0]))
        let token = try #require(lines.first { $0.hasPrefix("token: ") }?.dropFirst(7).split(separator: " ").first)
        let transport = try OpenMatesWebSocketTransport(
            origin: origin, sessionID: UUID().uuidString, credential: .token(String(token)))
        let client = OpenMatesClient(
            transport: transport, store: try OpenMatesStore.inMemory(), clock: ContinuousClock())
        let changes = client.changes()
        await client.start()
        for await change in changes {
            if case .status(let status) = change, status.sync == .complete { break }
        }
        #expect(try client.store.chatList().count == 26)
        await client.close()

        child.signal(SIGINT)
        let tail = String(
            decoding: try await child.readOutput(timeout: .seconds(20)) { _ in false }.data, as: UTF8.self)
        #expect(tail.contains("Stopped on SIGINT."))
        #expect((output + tail).split(separator: "\n").contains { $0.hasPrefix("served: ") && $0.contains("/v1/ws") })
        #expect(await child.waitForExit(timeout: .seconds(20)) == .exited(0))
    }

    @Test func aBadPortIsAUsageError() async throws {
        #expect(try await ToolRun.run(["sandbox", "openmates", "--port", "-1"]).status == 64)
        #expect(try await ToolRun.run(["sandbox", "openmates", "--bogus"]).status == 64)
    }
}
